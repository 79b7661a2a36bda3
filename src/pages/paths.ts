/** The payer pages' own paths; the instruction fields point at the others (src/transactions/instructions.ts). */
export { boletoPath, checkoutPath, pixQrPath } from '../transactions/instructions.js';

export const pixPagePath = (id: string): string => `/_sandbox/pix/${id}`;
