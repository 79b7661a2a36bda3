import { ARGENTINE_BANKS, PSE_BANKS } from '../rails/banks.js';
import { endToEndId } from '../rails/pix-e2e.js';
import { cryptoRng, pick, type Rng } from '../rails/random.js';

/** Real Brazilian institutions and their ISPB codes, as a payer's bank would appear. */
export const PAYER_INSTITUTIONS = [
  { ispb: '00000000', bank: 'BCO DO BRASIL S.A.' },
  { ispb: '60701190', bank: 'ITAÚ UNIBANCO S.A.' },
  { ispb: '60746948', bank: 'BCO BRADESCO S.A.' },
  { ispb: '90400888', bank: 'BCO SANTANDER (BRASIL) S.A.' },
  { ispb: '00360305', bank: 'CAIXA ECONOMICA FEDERAL' },
  { ispb: '18236120', bank: 'NU PAGAMENTOS - IP' },
] as const;

/**
 * `ispb` is a Brazilian field (8 digits) that clients parse for every payer: a Colombian or
 * Argentine bank carries its own clearing code there (ACH Colombia, BCRA), zero-padded.
 */
const padded = (banks: readonly { code: string; name: string }[]) => banks.map((b) => ({ ispb: b.code.padStart(8, '0'), bank: b.name }));
const COLOMBIAN = padded(PSE_BANKS);
const ARGENTINE = padded(ARGENTINE_BANKS);

/** The payer's bank is one of the charge's country; a Nequi payment comes from Nequi. */
function institutionsFor(currency: string, method: string): readonly { ispb: string; bank: string }[] {
  if (currency === 'COP') return method === 'NEQUI' ? COLOMBIAN.filter((b) => b.bank === 'Nequi') : COLOMBIAN;
  if (currency === 'ARS') return ARGENTINE;
  return PAYER_INSTITUTIONS;
}

export interface Payer {
  name: string;
  document: string | null;
  bank: string;
  ispb: string;
}

export interface Settlement {
  approvedAt: string;
  endToEndId: string;
  payer: Payer;
}

/**
 * What a payment adds to a transaction, decided once: the lookup's `endToEndId` and
 * `payer` are the very values the webhooks of the transaction carry.
 */
export function settlementOf(name: string, document: string | null, at: Date, charge: { currency: string; method: string }, rng: Rng = cryptoRng): Settlement {
  const institution = pick(rng, institutionsFor(charge.currency, charge.method));
  return {
    approvedAt: at.toISOString(),
    endToEndId: endToEndId(institution.ispb, at, rng),
    payer: { name, document, bank: institution.bank, ispb: institution.ispb },
  };
}
