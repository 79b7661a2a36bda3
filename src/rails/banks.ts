/** A bank as a payer's statement names it, with the code its country's clearing house gives it. */
export interface Bank {
  code: string;
  name: string;
}

/** ACH Colombia codes as PSE lists them, in the alphabetical order payers are used to. */
export const PSE_BANKS: readonly Bank[] = [
  { code: '1052', name: 'AV Villas' },
  { code: '1040', name: 'Banco Agrario' },
  { code: '1032', name: 'Banco Caja Social' },
  { code: '1001', name: 'Banco de Bogotá' },
  { code: '1023', name: 'Banco de Occidente' },
  { code: '1062', name: 'Banco Falabella' },
  { code: '1012', name: 'Banco GNB Sudameris' },
  { code: '1002', name: 'Banco Popular' },
  { code: '1007', name: 'Bancolombia' },
  { code: '1013', name: 'BBVA Colombia' },
  { code: '1009', name: 'Citibank' },
  { code: '1551', name: 'Daviplata' },
  { code: '1051', name: 'Davivienda' },
  { code: '1507', name: 'Nequi' },
  { code: '1019', name: 'Scotiabank Colpatria' },
];

/** Argentine banks by their BCRA entity code, the first three digits of the CBUs they issue. */
export const ARGENTINE_BANKS: readonly Bank[] = [
  { code: '011', name: 'Banco de la Nación Argentina' },
  { code: '007', name: 'Banco de Galicia y Buenos Aires' },
  { code: '072', name: 'Banco Santander Argentina' },
  { code: '017', name: 'BBVA Argentina' },
  { code: '285', name: 'Banco Macro' },
  { code: '014', name: 'Banco de la Provincia de Buenos Aires' },
];
