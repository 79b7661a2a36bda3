/** Types of pg-turns.mjs for the tests that count round trips with it. */
export function startTurnCounter(url: string): Promise<{ url: string; turns: () => number; close: () => Promise<void> }>;
