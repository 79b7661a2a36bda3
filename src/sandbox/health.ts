import type { Health } from '../spec/types.js';
import { VERSION } from '../version.js';

const startedAt = Date.now();

export function health(): Health {
  return { status: 'ok', version: VERSION, uptimeMs: Date.now() - startedAt };
}
