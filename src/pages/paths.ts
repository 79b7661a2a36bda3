/** The payer pages' own paths; the instruction fields point at the others (src/transactions/instructions.ts). */
export { boletoPath, checkoutPath, pixPagePath, pixQrPath, withToken } from '../transactions/instructions.js';

/** The path of a payer page's button (a form's action), with the page's token. */
export const actionPath = (pagePath: string, action: 'approve' | 'reject', token: string): string =>
  `${pagePath}/${action}?token=${encodeURIComponent(token)}`;
