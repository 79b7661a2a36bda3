import { describe, expect, it } from 'vitest';
import { isValidNit } from '../../src/rails/documents.js';
import {
  brebKeyOf,
  PSE_BANKS,
  renderCheckoutPage,
  transferDetailsOf,
} from '../../src/pages/checkout-page.js';
import { copRecord, PAYER_TOKEN, type CopMethod } from './fixtures.js';

const METHODS: readonly CopMethod[] = ['PSE', 'NEQUI', 'BREB', 'BANK_TRANSFER'];
const APPROVE = `<form method="post" action="/_sandbox/checkout/1000042/approve?token=${PAYER_TOKEN}">`;
const REJECT = `<form method="post" action="/_sandbox/checkout/1000042/reject?token=${PAYER_TOKEN}">`;

/** Text content of the page with tags dropped and the common entities decoded. */
function textOf(page: string): string {
  return page
    .replace(/<style>[\s\S]*?<\/style>/, '')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');
}

describe('renderCheckoutPage', () => {
  it('is a complete HTML5 document without external assets or scripts', () => {
    const page = renderCheckoutPage(copRecord('PSE'), 'Tienda Ejemplo');
    expect(page.startsWith('<!DOCTYPE html>')).toBe(true);
    expect(page).toContain('<meta charset="utf-8">');
    expect(page).toMatch(/<\/html>\s*$/);
    expect(page).not.toMatch(/<script|<link|src="http|url\(/i);
  });

  it('shows merchant, amount in pesos, description, id and status', () => {
    const text = textOf(renderCheckoutPage(copRecord('NEQUI'), 'Tienda Ejemplo'));
    expect(text).toContain('Tienda Ejemplo');
    expect(text).toContain('$ 15.000,00 COP');
    expect(text).toContain('Plan mensual');
    expect(text).toContain('1000042');
    expect(text).toContain('Pendiente');
  });

  it('formats large and small amounts with dot thousands and comma decimals', () => {
    const record = copRecord('PSE');
    const big = { ...record, view: { ...record.view, amount: 1_000_000_000 } };
    expect(textOf(renderCheckoutPage(big, 'T'))).toContain('$ 10.000.000,00 COP');
    const odd = { ...record, view: { ...record.view, amount: 1_234_507 } };
    expect(textOf(renderCheckoutPage(odd, 'T'))).toContain('$ 12.345,07 COP');
  });

  it('PSE: a bank select with the ACH codes and the person type radios inside the approve form', () => {
    const page = renderCheckoutPage(copRecord('PSE'), 'Tienda');
    const approveForm = page.slice(page.indexOf(APPROVE), page.indexOf('</form>', page.indexOf(APPROVE)));
    expect(approveForm).toContain('<select id="bank" name="bank" required>');
    for (const [code, name] of [
      ['1007', 'Bancolombia'],
      ['1051', 'Davivienda'],
      ['1001', 'Banco de Bogotá'],
      ['1507', 'Nequi'],
      ['1013', 'BBVA Colombia'],
      ['1023', 'Banco de Occidente'],
      ['1052', 'AV Villas'],
      ['1009', 'Citibank'],
      ['1062', 'Banco Falabella'],
    ] as const) {
      expect(approveForm).toContain(`<option value="${code}">${name}</option>`);
    }
    expect(new Set(PSE_BANKS.map((b) => b.code)).size).toBe(PSE_BANKS.length);
    expect(approveForm).toMatch(/<input type="radio" name="personType" value="N" checked> Persona natural/);
    expect(approveForm).toMatch(/<input type="radio" name="personType" value="J"> Persona jurídica/);
  });

  it('NEQUI: the payer phone and the push-notification note', () => {
    const page = renderCheckoutPage(copRecord('NEQUI'), 'Tienda');
    expect(page).toContain('+57 321 123 4567');
    expect(textOf(page)).toMatch(/notificación push/);
    expect(page).not.toContain('name="bank"');
  });

  it('NEQUI without a phone still renders', () => {
    const page = renderCheckoutPage(copRecord('NEQUI', { details: { phone: null } }), 'Tienda');
    expect(page).toContain('—');
  });

  it('BREB: the llave to pay to', () => {
    const page = renderCheckoutPage(copRecord('BREB'), 'Tienda');
    expect(brebKeyOf('1000042')).toBe('@sandbox1000042');
    expect(page).toContain('@sandbox1000042');
    expect(textOf(page)).toContain('Llave Bre-B');
  });

  it('BANK_TRANSFER: bank, account type, account number and a NIT with a valid check digit', () => {
    const record = copRecord('BANK_TRANSFER');
    const details = transferDetailsOf(record);
    expect(details.accountNumber).toMatch(/^\d{3}-\d{6}-\d{2}$/);
    expect(details.nit).toMatch(/^9\d{2}\.\d{3}\.\d{3}-\d$/);
    expect(isValidNit(details.nit.replace(/\./g, ''))).toBe(true);
    // Stable across renders, distinct across transactions.
    expect(transferDetailsOf(record)).toEqual(details);
    expect(transferDetailsOf(copRecord('BANK_TRANSFER', { id: '1000043' })).accountNumber).not.toBe(details.accountNumber);

    const text = textOf(renderCheckoutPage(record, 'Tienda'));
    for (const part of ['Bancolombia', 'Cuenta de ahorros', details.accountNumber, details.nit, 'NIT', 'Titular']) {
      expect(text).toContain(part);
    }
  });

  it.each(METHODS)('%s: approve and reject forms while PENDING', (method) => {
    const page = renderCheckoutPage(copRecord(method), 'Tienda');
    expect(page).toContain(APPROVE);
    expect(page).toContain(REJECT);
    expect(textOf(page)).toContain('Aprobar pago');
    expect(textOf(page)).toContain('Rechazar');
  });

  it.each([
    ['APPROVED', null, 'Pago aprobado'],
    ['BLOCKED', 'REJECTED', 'Pago rechazado'],
    ['BLOCKED', 'EXPIRED', 'Expirado'],
    ['REFUNDED', 'REFUNDED', 'Reembolsado'],
    ['CHARGEBACK', 'CHARGEBACK', 'Contracargo'],
  ] as const)('%s (%s): shows "%s" and no forms', (status, statusReason, label) => {
    for (const method of METHODS) {
      const page = renderCheckoutPage(copRecord(method, { status, statusReason }), 'Tienda');
      expect(page).not.toContain('<form');
      expect(page).not.toContain('<button');
      expect(page).toContain(`<p class="final-title">${label}</p>`);
    }
  });

  it('shows a banner for the result of the redirect', () => {
    const approved = renderCheckoutPage(copRecord('PSE', { status: 'APPROVED' }), 'Tienda', 'approved');
    expect(approved).toMatch(/<p class="banner ok" role="status">Listo: el pago fue aprobado/);
    const rejected = renderCheckoutPage(copRecord('PSE', { status: 'BLOCKED' }), 'Tienda', 'rejected');
    expect(rejected).toMatch(/<p class="banner bad" role="status">Listo: el pago fue rechazado/);
    const other = renderCheckoutPage(copRecord('PSE'), 'Tienda', '<i>already final</i>');
    expect(other).toContain('<p class="banner info" role="status">&lt;i&gt;already final&lt;/i&gt;</p>');
    expect(renderCheckoutPage(copRecord('PSE'), 'Tienda')).not.toContain('class="banner');
  });

  it('escapes every interpolated value', () => {
    const evil = '<script>alert(1)</script>"\'&';
    const escaped = '&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;';
    for (const method of METHODS) {
      for (const status of ['PENDING', 'APPROVED'] as const) {
        const record = copRecord(method, {
          status,
          id: `9"><img src=x onerror=alert(1)>`,
          details: { description: evil, phone: evil, name: evil },
        });
        const page = renderCheckoutPage(record, evil, evil);
        expect(page).not.toContain('<script>');
        expect(page).not.toContain('<img');
        expect(page).not.toContain('"><');
        expect(page).toContain(escaped);
      }
    }
  });
});
