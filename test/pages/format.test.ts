import { describe, expect, it } from 'vitest';
import {
  cpfCnpjLabel,
  formatBrl,
  formatColombianPhone,
  formatCop,
  formatCpfCnpj,
  formatDateBr,
} from '../../src/pages/format.js';

describe('page formats', () => {
  it('money from centavos', () => {
    expect(formatCop(1_500_000)).toBe('$ 15.000,00 COP');
    expect(formatCop(5)).toBe('$ 0,05 COP');
    expect(formatBrl(123_456)).toBe('R$ 1.234,56');
    expect(formatBrl(9_999_999_999)).toBe('R$ 99.999.999,99');
  });

  it('dates as dd/mm/yyyy without shifting time zones', () => {
    expect(formatDateBr('2026-07-15')).toBe('15/07/2026');
    expect(formatDateBr('2026-07-15T00:00:00.000Z')).toBe('15/07/2026');
  });

  it('CPF and CNPJ, the alphanumeric CNPJ too', () => {
    expect(formatCpfCnpj('52998224725')).toBe('529.982.247-25');
    expect(formatCpfCnpj('11222333000181')).toBe('11.222.333/0001-81');
    expect(formatCpfCnpj('12ABC34501DE35')).toBe('12.ABC.345/01DE-35');
    expect(formatCpfCnpj('123')).toBe('123');
    expect([cpfCnpjLabel('52998224725'), cpfCnpjLabel('12.ABC.345/01DE-35'), cpfCnpjLabel('x')]).toEqual(['CPF', 'CNPJ', 'CPF/CNPJ']);
  });

  it('Colombian mobiles', () => {
    expect(formatColombianPhone('+573211234567')).toBe('+57 321 123 4567');
    expect(formatColombianPhone('3211234567')).toBe('+57 321 123 4567');
    expect(formatColombianPhone('+14155550100')).toBe('+14155550100');
  });
});
