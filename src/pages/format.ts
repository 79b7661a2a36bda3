/**
 * Display formats for the hosted pages. Written out by hand rather than with Intl because ICU builds
 * differ (narrow no-break spaces, symbol placement), and the pages must read the same everywhere.
 */

/** "1.234.567,89": dot thousands and comma decimals, as in both Colombia and Brazil. */
export function formatMinorUnits(centavos: number): string {
  const sign = centavos < 0 ? '-' : '';
  const abs = Math.abs(Math.trunc(centavos));
  const units = String(Math.floor(abs / 100)).replace(/\B(?=(\d{3})+(?!\d))/g, '.');
  return `${sign}${units},${String(abs % 100).padStart(2, '0')}`;
}

export function formatCop(centavos: number): string {
  return `$ ${formatMinorUnits(centavos)} COP`;
}

export function formatBrl(centavos: number): string {
  return `R$ ${formatMinorUnits(centavos)}`;
}

/** "$1,234.56 MXN": Mexico writes comma thousands and dot decimals. */
export function formatMxn(centavos: number): string {
  const sign = centavos < 0 ? '-' : '';
  const abs = Math.abs(Math.trunc(centavos));
  const units = String(Math.floor(abs / 100)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${sign}$${units}.${String(abs % 100).padStart(2, '0')} MXN`;
}

/** "646 180 00100000017 2": bank, plaza, account and check digit, as Mexican banks print a CLABE. */
export function formatClabe(clabe: string): string {
  const m = /^(\d{3})(\d{3})(\d{11})(\d)$/.exec(clabe);
  return m ? `${m[1]} ${m[2]} ${m[3]} ${m[4]}` : clabe;
}

export function formatAmount(centavos: number, currency: string): string {
  if (currency === 'BRL') return formatBrl(centavos);
  if (currency === 'MXN') return formatMxn(centavos);
  return `$ ${formatMinorUnits(centavos)} ${currency}`;
}

/** Accepts YYYY-MM-DD or a full ISO timestamp; the calendar date is read as written, not shifted to a zone. */
export function formatDateBr(isoDate: string): string {
  const match = /^(\d{4})-(\d{2})-(\d{2})/.exec(isoDate);
  return match ? `${match[3]}/${match[2]}/${match[1]}` : isoDate;
}

/** CPF, CNPJ (alphanumeric too) in their printed forms; anything else comes back unchanged. */
export function formatCpfCnpj(document: string): string {
  const bare = document.replace(/[.\-/\s]/g, '').toUpperCase();
  if (/^\d{11}$/.test(bare)) return `${bare.slice(0, 3)}.${bare.slice(3, 6)}.${bare.slice(6, 9)}-${bare.slice(9)}`;
  if (/^[0-9A-Z]{12}\d{2}$/.test(bare)) {
    return `${bare.slice(0, 2)}.${bare.slice(2, 5)}.${bare.slice(5, 8)}/${bare.slice(8, 12)}-${bare.slice(12)}`;
  }
  return document;
}

/** "CPF" or "CNPJ" by length, for the label printed before a document; empty when it is neither. */
export function cpfCnpjLabel(document: string): string {
  const bare = document.replace(/[.\-/\s]/g, '').toUpperCase();
  if (/^\d{11}$/.test(bare)) return 'CPF';
  if (/^[0-9A-Z]{12}\d{2}$/.test(bare)) return 'CNPJ';
  return 'CPF/CNPJ';
}

/** "+57 321 123 4567" for Colombian mobiles; other numbers are shown as given. */
export function formatColombianPhone(phone: string): string {
  const bare = phone.replace(/[\s()-]/g, '');
  const match = /^(?:\+?57)?(3\d{2})(\d{3})(\d{4})$/.exec(bare);
  return match ? `+57 ${match[1]} ${match[2]} ${match[3]}` : phone;
}

/** "900.123.456-7" */
export function formatNit(base: string, checkDigit: string): string {
  return `${base.replace(/\B(?=(\d{3})+(?!\d))/g, '.')}-${checkDigit}`;
}
