import { invalid } from '../errors.js';

const DAY_MS = 86_400_000;
/** The boleto due-date factor restarted at 1000 on 2025-02-22 and wraps again on 2049-10-13. */
const LAST_DUE_DATE = '2049-10-12';

/** "Today" for a boleto is the Brazilian calendar day (America/Sao_Paulo). */
export function brazilDate(ms: number): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Sao_Paulo' }).format(new Date(ms));
}

export function defaultDueDate(nowMs: number): string {
  return brazilDate(nowMs + 3 * DAY_MS);
}

export function checkDueDate(dueDate: string, nowMs: number): void {
  const today = brazilDate(nowMs);
  if (dueDate < today) throw invalid(`dueDate must not be in the past (today is ${today} in Brazil)`);
  if (dueDate > LAST_DUE_DATE) throw invalid(`dueDate must be at most ${LAST_DUE_DATE} (the boleto due-date factor's range)`);
}
