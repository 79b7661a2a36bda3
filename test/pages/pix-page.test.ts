import { describe, expect, it } from 'vitest';
import { renderErrorPage } from '../../src/pages/error-page.js';
import { renderPixPage } from '../../src/pages/pix-page.js';
import type { Transaction } from '../../src/spec/types.js';
import type { TransactionRecord } from '../../src/transactions/transaction-record.js';
import { account, brlPendingRecord, PAYER_TOKEN, withStatus } from './fixtures.js';

const CODE = '00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Loja Exemplo6009SAO PAULO62070503***6304ABCD';

function pixRecord(pixCode = CODE): TransactionRecord {
  const pending = brlPendingRecord('PIX_BOLETO');
  return { ...pending, accountId: account.id, view: { ...pending.view, method: 'PIX', pixCode, expiresAt: '2026-07-13T15:30:00.000Z' } as unknown as Transaction };
}

describe('renderPixPage', () => {
  it('shows the QR, the copy-and-paste code and the pay and reject forms while pending', () => {
    const page = renderPixPage(pixRecord(), 'Loja <Exemplo>');
    expect(page).toContain(`<img class="qr" src="/_sandbox/pix/1000077/qr.png?token=${PAYER_TOKEN}"`);
    expect(page).toContain(`>${CODE.replace('***', '***')}</textarea>`);
    expect(page).toContain(`<form method="post" action="/_sandbox/pix/1000077/approve?token=${PAYER_TOKEN}">`);
    expect(page).toContain(`<form method="post" action="/_sandbox/pix/1000077/reject?token=${PAYER_TOKEN}">`);
    expect(page).toContain('Loja &lt;Exemplo&gt;');
    expect(page).toContain('Válido até 13/07/2026 15:30 UTC');
    // The copy button is an enhancement: hidden until the script shows it.
    expect(page).toMatch(/<button type="button" id="copy" class="copy" hidden>/);
    expect(page).toMatch(/<script>[\s\S]*clipboard[\s\S]*<\/script>/);
  });

  it('waits for the code (refreshing by itself) when it is not issued yet', () => {
    const page = renderPixPage(pixRecord(''), 'Loja Exemplo');
    expect(page).toContain('<meta http-equiv="refresh" content="3">');
    expect(page).not.toContain('<form');
    expect(page).not.toContain('<script>');
  });

  it('shows the outcome instead of the buttons once the charge has ended', () => {
    const paid = renderPixPage(withStatus(pixRecord(), 'APPROVED'), 'Loja Exemplo', 'approved');
    expect(paid).toContain('Pronto: pagamento aprovado.');
    expect(paid).toMatch(/class="final ok"[\s\S]*Pago/);
    expect(paid).not.toContain('<form');
    const blocked = renderPixPage(withStatus(pixRecord(), 'BLOCKED'), 'Loja Exemplo', 'rejected');
    expect(blocked).toContain('Pronto: pagamento recusado.');
    expect(blocked).toMatch(/class="final bad"[\s\S]*Cancelado/);
  });
});

describe('renderErrorPage', () => {
  it('says what went wrong in words, escaping the message', () => {
    const page = renderErrorPage(404, 'transaction <1> not found');
    expect(page.startsWith('<!DOCTYPE html>')).toBe(true);
    expect(page).toContain('Página não encontrada');
    expect(page).toContain('transaction &lt;1&gt; not found');
    expect(page).toContain('HTTP 404');
  });
});
