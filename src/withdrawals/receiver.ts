import { createHash } from 'node:crypto';
import { cpfCheckDigits } from '../rails/documents.js';
import { hashDigits } from '../rails/merchant.js';
import type { PixType } from '../spec/types.js';
import { PAYER_INSTITUTIONS } from '../transactions/settlement.js';

export interface Receiver {
  name: string;
  document: string;
  bank: string;
  ispb: string;
}

const NAMES = [
  'Ana Beatriz Souza',
  'Bruno Carvalho Lima',
  'Carla Mendes Rocha',
  'Diego Alves Pereira',
  'Fernanda Costa Ribeiro',
  'Gustavo Martins Araújo',
  'Juliana Ferreira Gomes',
  'Lucas Oliveira Santos',
  'Mariana Barbosa Dias',
  'Rafael Teixeira Nunes',
] as const;

const pickBy = <T>(seed: string, list: readonly T[]): T => list[createHash('sha256').update(seed).digest().readUInt32BE(0) % list.length] as T;

/**
 * Who owns a Pix key, as the DICT would answer: the same key always gives the same person
 * and bank, so repeated payouts to one seller look alike. A CPF or CNPJ key is its owner's
 * document; for the other types the document sent with the cash-out, else a valid CPF
 * derived from the key.
 */
export function receiverOf(type: PixType, key: string, document: string | undefined): Receiver {
  const institution = pickBy(`bank:${type}:${key}`, PAYER_INSTITUTIONS);
  const owner = type === 'CPF' || type === 'CNPJ' ? key : (document ?? derivedCpf(`${type}:${key}`));
  const name = type === 'CNPJ' ? `${pickBy(`name:${key}`, NAMES).split(' ')[1] ?? 'Sandbox'} Comércio Ltda` : pickBy(`name:${type}:${key}`, NAMES);
  return { name, document: owner, bank: institution.bank, ispb: institution.ispb };
}

function derivedCpf(seed: string): string {
  // A leading 1 keeps it clear of all-equal digits (not issued) and of the magic keys' zeros.
  const body = `1${hashDigits(`receiver-cpf:${seed}`, 8)}`;
  return body + cpfCheckDigits(body);
}
