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
export function settlementOf(name: string, document: string | null, at: Date, rng: Rng = cryptoRng): Settlement {
  const institution = pick(rng, PAYER_INSTITUTIONS);
  return {
    approvedAt: at.toISOString(),
    endToEndId: endToEndId(institution.ispb, at, rng),
    payer: { name, document, bank: institution.bank, ispb: institution.ispb },
  };
}
