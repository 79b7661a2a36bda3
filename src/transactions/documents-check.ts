import { isValidCuit } from '../rails/argentina.js';
import { isValidCnpj, isValidCpf, isValidNit } from '../rails/documents.js';
import { invalid } from '../errors.js';
import type { PurchaseRequest } from '../spec/types.js';
import type { Currency } from './transaction-record.js';

const cpfOrCnpj = (doc: string): boolean => (doc.length === 11 ? isValidCpf(doc) : isValidCnpj(doc));

/**
 * `--strict-documents`: check digits on top of the spec's lengths and digits. Off by
 * default because real integrations send documents the sandbox cannot vouch for.
 */
export function checkDocuments(currency: Currency, input: PurchaseRequest): void {
  const doc = input.responsibleDocument;
  if (currency === 'BRL') {
    if (input.cpf !== undefined && !cpfOrCnpj(input.cpf)) throw invalid('cpf has an invalid check digit (strict documents)');
    if (!cpfOrCnpj(doc)) throw invalid('responsibleDocument has an invalid check digit (strict documents)');
  } else if (currency === 'ARS') {
    // 11 digits may be a CPF or a CUIT: either check digit rule may hold.
    const ok = doc.length === 11 ? isValidCpf(doc) || isValidCuit(doc) : isValidCnpj(doc);
    if (!ok) throw invalid('responsibleDocument has an invalid check digit (strict documents: CPF, CUIT or CNPJ)');
  } else if (doc.includes('-') && !isValidNit(doc)) {
    // A COP document only reveals itself as a NIT through its "-DV" suffix; CC, CE and TI carry no check digit.
    throw invalid('responsibleDocument has an invalid NIT check digit (strict documents)');
  }
}
