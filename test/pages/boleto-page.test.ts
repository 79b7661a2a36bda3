import { describe, expect, it } from 'vitest';
import { boletoInstructionOf, itf25Bars, renderBoletoPage } from '../../src/pages/boleto-page.js';
import type { Transaction } from '../../src/spec/types.js';
import { fillInstruction } from '../../src/transactions/instructions.js';
import type { TransactionRecord } from '../../src/transactions/transaction-record.js';
import { account, brlPendingRecord, PAYER_TOKEN, withStatus } from './fixtures.js';

const PUBLIC_URL = 'http://localhost:4010';

function filled(record: TransactionRecord): TransactionRecord {
  return fillInstruction(record, { account, publicUrl: PUBLIC_URL, filledAt: 1_000 });
}

/** The spec's known-good sample: bank 341, due 2026-07-15, R$ 150.00. */
function knownGoodRecord(): TransactionRecord {
  const pending = brlPendingRecord('BOLETO', { amount: 15_000 });
  return {
    ...pending,
    view: {
      ...pending.view,
      paymentInstruction: {
        type: 'BOLETO',
        dueDate: '2026-07-15T00:00:00.000Z',
        boletoUrl: `${PUBLIC_URL}/_sandbox/boletos/${pending.id}`,
        boletoBarcode: '34191150800000150001750000123400012345678900',
        boletoDigitableLine: '34191750090012340001223456789009115080000015000',
      },
    } as Transaction,
    filledAt: 1_000,
  };
}

/**
 * Independent of the encoder's table: in Interleaved 2 of 5 the two wide elements of a digit carry
 * the weights 1, 2, 4, 7, 0 by position, and their sum is the digit (11 standing for 0).
 */
function itfDigit(pattern: string): number {
  const weights = [1, 2, 4, 7, 0];
  const wide = [...pattern].flatMap((e, i) => (e === 'w' ? [weights[i] ?? NaN] : []));
  expect(wide, `pattern ${pattern}`).toHaveLength(2);
  const sum = wide.reduce((a, b) => a + b, 0);
  return sum === 11 ? 0 : sum;
}

/** Reads modules back to digits from the widths of the runs alone, as a scanner does. */
function decodeItf(modules: readonly boolean[]): string {
  const first = modules.indexOf(true);
  const last = modules.lastIndexOf(true);
  const runs: number[] = [];
  for (let i = first; i <= last; ) {
    let j = i;
    while (j <= last && modules[j] === modules[i]) j++;
    runs.push(j - i);
    i = j;
  }
  const narrow = Math.min(...runs);
  expect(new Set(runs.map((w) => w / narrow))).toEqual(new Set([1, 3]));
  const elements = runs.map((w) => (w / narrow >= 2 ? 'w' : 'n')).join('');
  expect(elements.slice(0, 4)).toBe('nnnn');
  expect(elements.slice(-3)).toBe('wnn');
  const body = elements.slice(4, -3);
  expect(body.length % 10).toBe(0);
  let digits = '';
  for (let k = 0; k < body.length; k += 10) {
    const chunk = [...body.slice(k, k + 10)];
    digits += String(itfDigit(chunk.filter((_, i) => i % 2 === 0).join('')));
    digits += String(itfDigit(chunk.filter((_, i) => i % 2 === 1).join('')));
  }
  return digits;
}

/** Rebuilds the module row from the page's SVG rects (x and width are in modules). */
function modulesFromPage(page: string): boolean[] {
  const svg = /<svg[^>]*class="barcode"[^>]*>([\s\S]*?)<\/svg>/.exec(page);
  expect(svg).not.toBeNull();
  const open = svg?.[0] ?? '';
  const viewBoxWidth = Number(/viewBox="0 0 (\d+) 1"/.exec(open)?.[1]);
  const modules = new Array<boolean>(viewBoxWidth).fill(false);
  const bars = /<g fill="#000">([\s\S]*?)<\/g>/.exec(svg?.[1] ?? '')?.[1] ?? '';
  for (const match of bars.matchAll(/<rect x="(\d+)" y="0" width="(\d+)" height="1"\/>/g)) {
    const x = Number(match[1]);
    const w = Number(match[2]);
    for (let m = x; m < x + w; m++) modules[m] = true;
  }
  return modules;
}

function textOf(page: string): string {
  return page
    .replace(/<style>[\s\S]*?<\/style>/, '')
    .replace(/<svg[\s\S]*?<\/svg>/g, '')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');
}

describe('itf25Bars', () => {
  it('encodes start, interleaved pairs and stop with wide = 3 narrow', () => {
    // Start nnnn, pair "12": bars of 1 (wnnnw) with spaces of 2 (nwnnw), stop wnn.
    const expected = '1010' + '111' + '0' + '1' + '000' + '1' + '0' + '1' + '0' + '111' + '000' + '1110' + '1';
    expect(itf25Bars('12').map((b) => (b ? '1' : '0')).join('')).toBe(expected);
  });

  it('decodes back for every digit pair', () => {
    for (let a = 0; a < 10; a++) for (let b = 0; b < 10; b++) expect(decodeItf(itf25Bars(`${a}${b}`))).toBe(`${a}${b}`);
  });

  it('is 405 modules for a boleto barcode (101.25 mm at FEBRABAN\'s 0.25 mm)', () => {
    expect(itf25Bars('0'.repeat(44))).toHaveLength(405);
  });

  it('refuses odd lengths and non-digits', () => {
    expect(() => itf25Bars('123')).toThrow(RangeError);
    expect(() => itf25Bars('1a')).toThrow(RangeError);
  });
});

describe('renderBoletoPage', () => {
  it('prints the spec sample: digitable line, amount, due date, and an SVG barcode that decodes back', () => {
    const record = knownGoodRecord();
    const page = renderBoletoPage(record, 'Loja Exemplo');
    expect(page).toContain('34191.75009 00123.400012 23456.789009 1 15080000015000');
    const text = textOf(page);
    expect(text).toContain('R$ 150,00');
    expect(text).toContain('15/07/2026');
    expect(text).toContain('341-7');
    expect(text).toContain('175/123400012345678900');
    expect(decodeItf(modulesFromPage(page))).toBe('34191150800000150001750000123400012345678900');
  });

  it('prints a boleto filled by the sandbox, with beneficiary, payer and address', () => {
    const record = filled(brlPendingRecord('BOLETO'));
    const instruction = boletoInstructionOf(record.view);
    expect(instruction).not.toBeNull();
    const page = renderBoletoPage(record, 'Loja Exemplo');
    const text = textOf(page);
    expect(text).toContain('R$ 1.234,56');
    expect(text).toContain('15/07/2026');
    expect(text).toContain('Loja Exemplo');
    expect(text).toContain('11.222.333/0001-81');
    expect(text).toContain('João da Silva');
    expect(text).toContain('529.982.247-25');
    expect(text).toContain('Rua das Flores, 100 - Apto 12');
    expect(text).toContain('Centro - São Paulo/SP - CEP 01310-100');
    expect(text).toContain(`109/${'1000077'.padStart(8, '0')}`);
    expect(page).toContain(
      `${instruction?.boletoDigitableLine.slice(0, 5)}.${instruction?.boletoDigitableLine.slice(5, 10)} `,
    );
    expect(decodeItf(modulesFromPage(page))).toBe(instruction?.boletoBarcode);
    // A plain boleto has no Pix part.
    expect(page).not.toContain('qr.png');
    expect(page).not.toContain('<textarea');
  });

  it('is A4-printable and self-contained', () => {
    const page = renderBoletoPage(filled(brlPendingRecord('BOLETO')), 'Loja');
    expect(page.startsWith('<!DOCTYPE html>')).toBe(true);
    expect(page).toContain('@page{size:A4');
    expect(page).toContain('@media print');
    expect(page).not.toMatch(/<script|<link|src="http/i);
  });

  it('PIX_BOLETO also shows the Pix QR and the copy-and-paste code', () => {
    const record = filled(brlPendingRecord('PIX_BOLETO'));
    const pixCode = 'pixCode' in record.view ? record.view.pixCode : undefined;
    expect(pixCode).toMatch(/^000201/);
    const page = renderBoletoPage(record, 'Loja Exemplo');
    expect(page).toContain(`<img src="/_sandbox/pix/1000077/qr.png?token=${PAYER_TOKEN}"`);
    expect(page).toContain(`<textarea id="pix-code" readonly rows="5" spellcheck="false">${pixCode}</textarea>`);
  });

  it('renders "Registro pendente" until the instruction is filled, refreshing itself', () => {
    const page = renderBoletoPage(brlPendingRecord('PIX_BOLETO'), 'Loja Exemplo');
    expect(page).toContain('Registro pendente');
    expect(page).toContain('<meta http-equiv="refresh" content="3">');
    expect(page).not.toContain('<svg');
    expect(page).not.toContain('qr.png');
  });

  it('stamps "Pago" when approved and "Vencido" when expired, and drops the Pix part', () => {
    const record = filled(brlPendingRecord('PIX_BOLETO'));
    const paid = renderBoletoPage(withStatus(record, 'APPROVED'), 'Loja');
    expect(paid).toMatch(/<div class="stamp ok" role="status"><span class="stamp-text">Pago<\/span>/);
    expect(paid).not.toContain('qr.png');
    const expired = renderBoletoPage(withStatus(record, 'BLOCKED', 'EXPIRED'), 'Loja');
    expect(expired).toMatch(/<span class="stamp-text">Vencido<\/span>/);
    const cancelled = renderBoletoPage(withStatus(record, 'BLOCKED', 'DECLINED'), 'Loja');
    expect(cancelled).toMatch(/<span class="stamp-text">Cancelado<\/span>/);
    expect(renderBoletoPage(record, 'Loja')).not.toContain('class="stamp');
    // Nothing to wait for once it is final.
    expect(renderBoletoPage(withStatus(brlPendingRecord('BOLETO'), 'BLOCKED', 'EXPIRED'), 'Loja')).not.toContain('http-equiv');
  });

  it('escapes every interpolated value', () => {
    const evil = '<script>alert(1)</script>"\'&';
    const escaped = '&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;';
    const record = filled(
      brlPendingRecord('PIX_BOLETO', {
        details: {
          name: evil,
          cpf: evil,
          description: evil,
          responsibleDocument: evil,
          boletoAddress: { address: evil, district: evil, city: evil, zipCode: evil, uf: evil, number: evil, complement: evil },
        },
      }),
    );
    const withEvilPix = { ...record, view: { ...record.view, pixCode: evil } as Transaction };
    for (const r of [withEvilPix, brlPendingRecord('BOLETO', { details: { name: evil } })]) {
      const page = renderBoletoPage(r, evil);
      expect(page).not.toContain('<script>');
      expect(page).toContain(escaped);
    }
  });

  it('treats a malformed instruction as not filled rather than printing a bad barcode', () => {
    const record = knownGoodRecord();
    const instruction = boletoInstructionOf(record.view);
    const broken = { ...record, view: { ...record.view, paymentInstruction: { ...instruction, boletoBarcode: '123' } } as Transaction };
    expect(boletoInstructionOf(broken.view)).toBeNull();
    expect(renderBoletoPage(broken, 'Loja')).toContain('Registro pendente');
  });
});
