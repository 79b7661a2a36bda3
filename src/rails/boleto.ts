/** Boleto de cobrança (FEBRABAN): 44-digit barcode and 47-digit digitable line. */

export interface BoletoInput {
  /** 3-digit FEBRABAN bank code. */
  bankCode: string;
  amountCentavos: number;
  /** YYYY-MM-DD. */
  dueDate: string;
  /** 25 digits whose layout belongs to the issuing bank. */
  freeField: string;
}

export interface Boleto {
  barcode: string;
  /** 47 digits, no punctuation; see formatDigitableLine for the printed form. */
  digitableLine: string;
}

const DAY_MS = 86_400_000;
const FACTOR_EPOCH = Date.UTC(1997, 9, 7);
// Factor 1000. From here the factor cycles through 1000..9999 every 9000 days: 2025-02-22 is 1000 again,
// and so is 2049-10-14 (2049-10-13, the doc's "next wrap", is that cycle's 9999).
const FACTOR_CYCLE_START = Date.UTC(2000, 6, 3);
const FACTOR_CYCLE_DAYS = 9000;
const AMOUNT_MAX_CENTAVOS = 9_999_999_999;

function parseIsoDate(isoDate: string): number {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(isoDate);
  const [year, month, day] = match ? [Number(match[1]), Number(match[2]), Number(match[3])] : [NaN, NaN, NaN];
  const time = Date.UTC(year, month - 1, day);
  // Date.UTC rolls 2025-02-30 over into March; a round trip catches that.
  if (Number.isNaN(time) || new Date(time).toISOString().slice(0, 10) !== isoDate) {
    throw new RangeError(`not a calendar date in YYYY-MM-DD form: "${isoDate}"`);
  }
  return time;
}

/**
 * 4-digit due-date factor. Days since 1997-10-07 until 2025-02-21 (9999); the factor then restarted
 * at 1000 on 2025-02-22 and counts up again, which is the same as cycling 1000..9999 from 2000-07-03.
 */
export function dueDateFactor(isoDate: string): string {
  const time = parseIsoDate(isoDate);
  // 1997-10-07 itself would be 0000, which means "no due date".
  if (time <= FACTOR_EPOCH) throw new RangeError(`due date ${isoDate} is before the factor epoch (1997-10-08)`);
  const factor =
    time < FACTOR_CYCLE_START
      ? Math.round((time - FACTOR_EPOCH) / DAY_MS)
      : 1000 + (Math.round((time - FACTOR_CYCLE_START) / DAY_MS) % FACTOR_CYCLE_DAYS);
  return String(factor).padStart(4, '0');
}

/** Weights 2..9 from the right; 0, 10 and 11 all become 1 so the digit is never 0. */
export function generalCheckDigit(barcodeWithoutDv: string): string {
  let sum = 0;
  let weight = 2;
  for (let i = barcodeWithoutDv.length - 1; i >= 0; i--) {
    sum += Number(barcodeWithoutDv[i]) * weight;
    weight = weight === 9 ? 2 : weight + 1;
  }
  const dv = 11 - (sum % 11);
  return dv === 10 || dv === 11 ? '1' : String(dv);
}

/** Weights 2,1,2,1… from the right, two-digit products summed digit by digit. */
export function mod10CheckDigit(digits: string): string {
  let sum = 0;
  let weight = 2;
  for (let i = digits.length - 1; i >= 0; i--) {
    const product = Number(digits[i]) * weight;
    sum += product > 9 ? product - 9 : product;
    weight = weight === 2 ? 1 : 2;
  }
  return String((10 - (sum % 10)) % 10);
}

export function buildBoleto(input: BoletoInput): Boleto {
  const { bankCode, amountCentavos, dueDate, freeField } = input;
  if (!/^\d{3}$/.test(bankCode)) throw new RangeError(`bankCode must be 3 digits, got "${bankCode}"`);
  // Validators treat a barcode starting with 8 as a utility (arrecadação) slip and apply other rules.
  if (bankCode.startsWith('8')) throw new RangeError(`bankCode ${bankCode} starts with 8, which marks utility slips`);
  if (!Number.isSafeInteger(amountCentavos) || amountCentavos < 0 || amountCentavos > AMOUNT_MAX_CENTAVOS) {
    throw new RangeError(`amountCentavos must be an integer from 0 to ${AMOUNT_MAX_CENTAVOS}, got ${amountCentavos}`);
  }
  if (!/^\d{25}$/.test(freeField)) throw new RangeError('freeField must be 25 digits');
  const withoutDv = bankCode + '9' + dueDateFactor(dueDate) + String(amountCentavos).padStart(10, '0') + freeField;
  const barcode = withoutDv.slice(0, 4) + generalCheckDigit(withoutDv) + withoutDv.slice(4);
  return { barcode, digitableLine: digitableLineFromBarcode(barcode) };
}

export function digitableLineFromBarcode(barcode: string): string {
  if (!/^\d{44}$/.test(barcode)) throw new RangeError('a barcode is 44 digits');
  const field1 = barcode.slice(0, 4) + barcode.slice(19, 24);
  const field2 = barcode.slice(24, 34);
  const field3 = barcode.slice(34, 44);
  return (
    field1 +
    mod10CheckDigit(field1) +
    field2 +
    mod10CheckDigit(field2) +
    field3 +
    mod10CheckDigit(field3) +
    barcode.slice(4, 5) +
    barcode.slice(5, 19)
  );
}

/** Dots and spaces are accepted so that a printed line can be passed back in. */
function lineDigits(line: string): string {
  const bare = line.replace(/[ .]/g, '');
  if (!/^\d{47}$/.test(bare)) throw new RangeError('a digitable line is 47 digits');
  return bare;
}

export function formatDigitableLine(line: string): string {
  const d = lineDigits(line);
  const field1 = `${d.slice(0, 5)}.${d.slice(5, 10)}`;
  const field2 = `${d.slice(10, 15)}.${d.slice(15, 21)}`;
  const field3 = `${d.slice(21, 26)}.${d.slice(26, 32)}`;
  return `${field1} ${field2} ${field3} ${d.slice(32, 33)} ${d.slice(33)}`;
}

/** Rearranges only; the field check digits are dropped, so validate the line separately. */
export function barcodeFromDigitableLine(line: string): string {
  const d = lineDigits(line);
  return d.slice(0, 4) + d.slice(32, 33) + d.slice(33, 47) + d.slice(4, 9) + d.slice(10, 20) + d.slice(21, 31);
}

export function isValidBarcode(barcode: string): boolean {
  return (
    /^\d{44}$/.test(barcode) &&
    barcode[3] === '9' &&
    generalCheckDigit(barcode.slice(0, 4) + barcode.slice(5)) === barcode[4]
  );
}

/** Fields 1-3 carry their own mod-10 digit; field 5 (factor and amount) is covered only by the general one. */
export function isValidDigitableLine(line: string): boolean {
  let d: string;
  try {
    d = lineDigits(line);
  } catch {
    return false;
  }
  return (
    mod10CheckDigit(d.slice(0, 9)) === d[9] &&
    mod10CheckDigit(d.slice(10, 20)) === d[20] &&
    mod10CheckDigit(d.slice(21, 31)) === d[31] &&
    isValidBarcode(barcodeFromDigitableLine(d))
  );
}
