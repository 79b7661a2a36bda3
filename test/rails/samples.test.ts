// Every known-good sample of shared/spec/payment-formats.md, rebuilt from its inputs where we have a
// builder and checked by both our validators and the independent npm ones.
import cbuValidator from 'arg.js/src/cbu.js';
import cuitValidator from 'arg.js/src/cuit.js';
import boletoValidator from 'boleto-brasileiro-validator';
import { ColombiaValidators } from 'colombia-validators';
import { cnpj as cnpjValidator, cpf as cpfValidator } from 'cpf-cnpj-validator';
import { hasError, parsePix } from 'pix-utils';
import { describe, expect, it } from 'vitest';
import { buildAlias, buildCvu, isValidAlias, isValidCbu, isValidCuit } from '../../src/rails/argentina.js';
import {
  barcodeFromDigitableLine,
  buildBoleto,
  dueDateFactor,
  formatDigitableLine,
  isValidBarcode,
  isValidDigitableLine,
} from '../../src/rails/boleto.js';
import { crc16CcittFalse } from '../../src/rails/crc16.js';
import { isValidCnpj, isValidCpf, isValidNit, nitCheckDigit } from '../../src/rails/documents.js';
import { buildBrCode, isValidBrCode, parseBrCode } from '../../src/rails/pix.js';
import { seededRng } from '../../src/rails/random.js';

describe('CRC-16/CCITT-FALSE', () => {
  it('gives the standard check value', () => {
    expect(crc16CcittFalse('123456789')).toBe('29B1');
  });
});

describe('Pix BR Code samples', () => {
  const samples = [
    {
      name: "central bank manual's static example",
      code: '00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***63041D3D',
      build: () =>
        buildBrCode({ kind: 'static', key: '123e4567-e12b-12d1-a456-426655440000', merchantName: 'Fulano de Tal', merchantCity: 'BRASILIA' }),
    },
    {
      name: 'static with amount and txid',
      code: '00020126360014br.gov.bcb.pix0114112223330001815204000053039865406150.005802BR5917LOJA EXEMPLO LTDA6009SAO PAULO62150511PEDIDO1234563045150',
      build: () =>
        buildBrCode({
          kind: 'static',
          key: '11222333000181',
          amountCentavos: 15000,
          merchantName: 'LOJA EXEMPLO LTDA',
          merchantCity: 'SAO PAULO',
          txid: 'PEDIDO12345',
        }),
    },
    {
      name: 'dynamic',
      code: '00020101021226810014br.gov.bcb.pix2559pix.example.com/qr/v2/cobv/9d36b84fc70b478fb95c12729b90ca255204000053039865406150.005802BR5917LOJA EXEMPLO LTDA6009SAO PAULO62070503***63046BF1',
      build: () =>
        buildBrCode({
          kind: 'dynamic',
          locationUrl: 'pix.example.com/qr/v2/cobv/9d36b84fc70b478fb95c12729b90ca25',
          amountCentavos: 15000,
          merchantName: 'LOJA EXEMPLO LTDA',
          merchantCity: 'SAO PAULO',
        }),
    },
  ];

  for (const sample of samples) {
    it(`${sample.name}: rebuilt byte for byte and accepted`, () => {
      expect(sample.build()).toBe(sample.code);
      expect(isValidBrCode(sample.code)).toBe(true);
      expect(hasError(parsePix(sample.code))).toBe(false);
    });
  }

  it('parses the fields of the dynamic sample', () => {
    const parsed = parseBrCode(samples[2]!.code);
    expect(parsed.kind).toBe('dynamic');
    expect(parsed.amountCentavos).toBe(15000);
    expect(parsed.crcValid).toBe(true);
    expect(parsed.fields.get('01')).toBe('12');
    expect(parsed.merchantAccount.get('25')).toBe('pix.example.com/qr/v2/cobv/9d36b84fc70b478fb95c12729b90ca25');
    expect(parsed.additionalData.get('05')).toBe('***');
    expect([...parsed.fields.keys()]).toEqual(['00', '01', '26', '52', '53', '54', '58', '59', '60', '62', '63']);
  });
});

describe('boleto samples', () => {
  const samples = [
    {
      printed: '34191.75124 34567.861561 51387.710000 3 49010000295295',
      barcode: '34193490100002952951751234567861565138771000',
      input: { bankCode: '341', amountCentavos: 295295, dueDate: '2011-03-09', freeField: '1751234567861565138771000' },
      factor: '4901',
    },
    {
      printed: '23793.38128 60007.827136 95000.063305 9 75520000370000',
      barcode: '23799755200003700003381260007827139500006330',
      input: { bankCode: '237', amountCentavos: 370000, dueDate: '2018-06-11', freeField: '3381260007827139500006330' },
      factor: '7552',
    },
    {
      printed: '34191.75009 00123.400012 23456.789009 1 15080000015000',
      barcode: '34191150800000150001750000123400012345678900',
      input: { bankCode: '341', amountCentavos: 15000, dueDate: '2026-07-15', freeField: '1750000123400012345678900' },
      factor: '1508',
    },
  ];

  for (const { printed, barcode, input, factor } of samples) {
    const line = printed.replace(/[ .]/g, '');
    it(`${barcode}: rebuilt from its inputs, both ways, and accepted`, () => {
      expect(dueDateFactor(input.dueDate)).toBe(factor);
      expect(buildBoleto(input)).toEqual({ barcode, digitableLine: line });
      expect(formatDigitableLine(line)).toBe(printed);
      expect(barcodeFromDigitableLine(line)).toBe(barcode);
      expect(barcodeFromDigitableLine(printed)).toBe(barcode);
      expect(isValidBarcode(barcode)).toBe(true);
      expect(isValidDigitableLine(line)).toBe(true);
      expect(isValidDigitableLine(printed)).toBe(true);
      expect(boletoValidator.boletoBancarioCodigoBarras(barcode)).toBe(true);
      expect(boletoValidator.boletoBancarioLinhaDigitavel(line, true)).toBe(true);
    });
  }

  it('the doc line 2 sample is the bare form of the printed one we use', () => {
    expect(samples[1]!.printed.replace(/[ .]/g, '')).toBe('23793381286000782713695000063305975520000370000');
  });

  it('the post-reset sample has a general check digit of 1 from a mod-11 result of 10', () => {
    expect(samples[2]!.barcode[4]).toBe('1');
  });
});

describe('due-date factor', () => {
  it.each([
    ['1997-10-08', '0001'],
    ['2000-07-03', '1000'],
    ['2011-03-09', '4901'],
    ['2025-02-21', '9999'],
    ['2025-02-22', '1000'],
    ['2025-02-23', '1001'],
    ['2026-07-15', '1508'],
    // 2025-02-22 + 8999 days: the last day before the factor cycles back to 1000.
    ['2049-10-13', '9999'],
    ['2049-10-14', '1000'],
  ])('%s -> %s', (date, factor) => {
    expect(dueDateFactor(date)).toBe(factor);
  });
});

describe('CPF, CNPJ and NIT samples', () => {
  it.each(['52998224725', '11144477735', '12345678909', '529.982.247-25'])('CPF %s', (cpf) => {
    expect(isValidCpf(cpf)).toBe(true);
    // cpf-cnpj-validator blacklists 12345678909, the placeholder everyone types; its digits are right,
    // so we accept it, but generateCpf never emits it.
    expect(cpfValidator.isValid(cpf, true)).toBe(cpf !== '12345678909');
  });

  it.each(['11222333000181', '00000000000191', '12ABC34501DE35', '11.222.333/0001-81', '12.ABC.345/01DE-35'])('CNPJ %s', (cnpj) => {
    expect(isValidCnpj(cnpj)).toBe(true);
    expect(cnpjValidator.isValid(cnpj, true)).toBe(true);
  });

  it('NIT 800197268 has DV 4', () => {
    const nitValidator = new ColombiaValidators().NIT;
    expect(nitCheckDigit('800197268')).toBe('4');
    for (const nit of ['8001972684', '800197268-4']) {
      expect(isValidNit(nit)).toBe(true);
      expect(nitValidator.validate(nit)).toBe(true);
    }
  });
});

describe('Argentina samples', () => {
  it.each(['0000003100012345678907', '2850590940090418135201', '0110433630043313857683'])('CBU/CVU %s', (cbu) => {
    expect(isValidCbu(cbu)).toBe(true);
    expect(cbuValidator.isValid(cbu)).toBe(true);
  });

  it('rebuilds the CVU sample from its PSP code and customer id', () => {
    expect(buildCvu({ pspCode: '0003', customerId: '001234567890' })).toBe('0000003100012345678907');
  });

  it.each(['20055361682', '33693450239', '20-05536168-2'])('CUIT %s', (cuit) => {
    expect(isValidCuit(cuit)).toBe(true);
    expect(cuitValidator.isValid(cuit.replace(/-/g, ''))).toBe(true);
  });

  it('alias CUARTO.CENTRO.NAIPE', () => {
    expect(isValidAlias('CUARTO.CENTRO.NAIPE')).toBe(true);
    expect(isValidAlias(buildAlias(seededRng(1)))).toBe(true);
  });
});
