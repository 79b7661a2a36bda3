/** Argentina: CBU/CVU account numbers, transfer aliases and CUIT tax ids. */
import { digits, pick, type Rng } from './random.js';

export interface CvuParts {
  /** 4-digit code the BCRA assigns to the payment service provider. */
  pspCode: string;
  /** 12-digit account id inside the PSP. */
  customerId: string;
}

const BLOCK1_WEIGHTS = [7, 1, 3, 9, 7, 1, 3] as const;
const BLOCK2_WEIGHTS = [3, 9, 7, 1, 3, 9, 7, 1, 3, 9, 7, 1, 3] as const;

function mod10Weighted(body: string, weights: readonly number[]): string {
  let sum = 0;
  for (const [i, weight] of weights.entries()) sum += Number(body[i]) * weight;
  return String((10 - (sum % 10)) % 10);
}

/** A CVU is a CBU whose entity is 000: block 1 is 000 + PSP code, block 2 is 0 + customer id. */
export function buildCvu(source: Rng | CvuParts): string {
  const { pspCode, customerId } =
    typeof source === 'function' ? { pspCode: digits(source, 4), customerId: digits(source, 12) } : source;
  if (!/^\d{4}$/.test(pspCode)) throw new RangeError(`pspCode must be 4 digits, got "${pspCode}"`);
  if (!/^\d{12}$/.test(customerId)) throw new RangeError(`customerId must be 12 digits, got "${customerId}"`);
  const block1 = '000' + pspCode;
  const block2 = '0' + customerId;
  return block1 + mod10Weighted(block1, BLOCK1_WEIGHTS) + block2 + mod10Weighted(block2, BLOCK2_WEIGHTS);
}

/** Checks both blocks' digits; CVUs pass too since they share the layout. */
export function isValidCbu(cbuOrCvu: string): boolean {
  return (
    /^\d{22}$/.test(cbuOrCvu) &&
    mod10Weighted(cbuOrCvu.slice(0, 7), BLOCK1_WEIGHTS) === cbuOrCvu[7] &&
    mod10Weighted(cbuOrCvu.slice(8, 21), BLOCK2_WEIGHTS) === cbuOrCvu[21]
  );
}

const PERSON_PREFIXES = ['20', '23', '24', '27'] as const;
const COMPANY_PREFIXES = ['30', '33', '34'] as const;
const CUIT_PREFIXES: readonly string[] = [...PERSON_PREFIXES, ...COMPANY_PREFIXES];
const CUIT_WEIGHTS = [5, 4, 3, 2, 7, 6, 5, 4, 3, 2] as const;

/** Undefined where the sum leaves a check digit of 10: AFIP never issues those numbers. */
export function cuitCheckDigit(first10: string): string | undefined {
  if (!/^\d{10}$/.test(first10)) throw new RangeError('a CUIT body is 10 digits');
  let sum = 0;
  for (const [i, weight] of CUIT_WEIGHTS.entries()) sum += Number(first10[i]) * weight;
  const dv = 11 - (sum % 11);
  if (dv === 10) return undefined;
  return dv === 11 ? '0' : String(dv);
}

export function buildCuit(rng: Rng, kind: 'person' | 'company'): string {
  const prefixes = kind === 'person' ? PERSON_PREFIXES : COMPANY_PREFIXES;
  // About one draw in eleven lands on a 10; redrawing keeps the numbers uniform over issuable ones.
  for (;;) {
    const first10 = pick(rng, prefixes) + digits(rng, 8);
    const dv = cuitCheckDigit(first10);
    if (dv !== undefined) return first10 + dv;
  }
}

/** 11 digits, optionally printed as XX-XXXXXXXX-X. */
export function isValidCuit(cuit: string): boolean {
  const match = /^(\d{2})(-?)(\d{8})\2(\d)$/.exec(cuit);
  if (!match) return false;
  const [, prefix = '', , body = '', dv] = match;
  return CUIT_PREFIXES.includes(prefix) && cuitCheckDigit(prefix + body) === dv;
}

// Four to six letters each, so any three joined by dots land within 14-20 characters.
export const ALIAS_WORDS: readonly string[] = [
  'ARBOL', 'ARENA', 'AVION', 'BARCO', 'BOTA', 'BRISA', 'CALLE', 'CAMPO', 'CASA', 'CIELO',
  'CLAVO', 'CUARTO', 'CENTRO', 'DEDO', 'DUNA', 'FARO', 'FLOR', 'FUEGO', 'GATO', 'GLOBO',
  'HOJA', 'HUMO', 'ISLA', 'JARRA', 'LAGO', 'LAPIZ', 'LIBRO', 'LIMON', 'LLAVE', 'LUNA',
  'MANGO', 'MAPA', 'MESA', 'MONTE', 'MUNDO', 'NAIPE', 'NIEVE', 'NUBE', 'OLIVO', 'OLMO',
  'PALMA', 'PATIO', 'PERRO', 'PIANO', 'PIEDRA', 'PLATO', 'PUENTE', 'PUERTA', 'RELOJ', 'REMO',
  'ROSA', 'SALTO', 'SELVA', 'SILLA', 'SOMBRA', 'TANGO', 'TECHO', 'TIGRE', 'TORRE', 'TREN',
  'VALLE', 'VASO', 'VELA', 'VIENTO', 'YERBA', 'ZORRO',
];

export function buildAlias(rng: Rng): string {
  return [pick(rng, ALIAS_WORDS), pick(rng, ALIAS_WORDS), pick(rng, ALIAS_WORDS)].join('.');
}

/** The BCRA rule: 6-20 characters of letters, digits, "." and "-". */
export function isValidAlias(alias: string): boolean {
  return /^[A-Za-z0-9.-]{6,20}$/.test(alias);
}
