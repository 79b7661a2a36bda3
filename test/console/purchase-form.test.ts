import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { CONSOLE_DEFAULTS, CONSOLE_METHODS, CONSOLE_TEST_CARDS, centavosOf } from '../../src/console/client/purchase.js';
import { loadOpenApi } from '../../src/spec/openapi.js';
import { TEST_CARDS } from '../../src/transactions/test-cards.js';
import { ROOT } from '../helpers/process.js';

describe("the console's New purchase form", () => {
  it('offers every test card of the sandbox, as the README prints them', () => {
    expect(CONSOLE_TEST_CARDS.map(([number]) => number.replace(/ /g, '')).sort()).toEqual(Object.keys(TEST_CARDS).sort());
    for (const [number] of CONSOLE_TEST_CARDS) expect(number).toMatch(/^\d{4} \d{4} \d{4} \d{4}$/);
  });

  it("offers each currency of openapi.yaml exactly the methods its purchase rules allow (MXN: SPEI), with test data they accept", async () => {
    const schemas = (await loadOpenApi()).components?.schemas ?? {};
    const rules = (name: string) => schemas[name] as { properties: Record<string, { enum?: string[]; pattern?: string; minimum?: number; maximum?: number }> };
    const currencies = (schemas.Currency as { enum: string[] }).enum;
    expect(Object.keys(CONSOLE_METHODS).sort()).toEqual([...currencies].sort());
    for (const currency of currencies) {
      const r = rules(`${currency[0]}${currency.slice(1).toLowerCase()}PurchaseRules`).properties;
      expect([...(CONSOLE_METHODS[currency as keyof typeof CONSOLE_METHODS] ?? [])].sort(), currency).toEqual([...(r.paymentMethod?.enum ?? [])].sort());
      const data = CONSOLE_DEFAULTS[currency as keyof typeof CONSOLE_DEFAULTS];
      if (r.phone?.pattern && data.phone) expect(data.phone, `${currency} phone`).toMatch(new RegExp(r.phone.pattern, 'u'));
      if (r.responsibleDocument?.pattern) expect(data.responsibleDocument, `${currency} responsibleDocument`).toMatch(new RegExp(r.responsibleDocument.pattern, 'u'));
      const cents = centavosOf(data.amount) ?? NaN;
      expect(cents, `${currency} amount`).toBeGreaterThanOrEqual(r.amount?.minimum ?? 100);
      expect(cents, `${currency} amount`).toBeLessThanOrEqual(r.amount?.maximum ?? Infinity);
    }
    expect(CONSOLE_METHODS.MXN).toEqual(['SPEI']);
    expect(CONSOLE_DEFAULTS.MXN).toMatchObject({ name: 'Sofía Hernández', phone: '+525512345678', responsibleDocument: 'XAXX010101000', cpf: '' });
  });

  it('reads an amount in units, with a dot or a comma, into centavos', () => {
    expect(centavosOf('150.00')).toBe(15_000);
    expect(centavosOf('150,5')).toBe(15_050);
    expect(centavosOf(' 15000 ')).toBe(1_500_000);
    expect(centavosOf('0.01')).toBe(1);
    for (const bad of ['', '1.234', '-5', '1e3', 'abc', '1.2.3']) expect(centavosOf(bad), bad).toBeUndefined();
  });
});

describe('what git keeps out', () => {
  it('ignores the tarballs npm pack writes, and clean-package\'s backup', () => {
    for (const file of ['payments-sandbox-0.1.0.tgz', 'vendor/payments-sandbox-9.9.9.tgz', 'package.json.backup']) {
      expect(spawnSync('git', ['check-ignore', '-q', file], { cwd: ROOT }).status, file).toBe(0);
    }
  });
});
