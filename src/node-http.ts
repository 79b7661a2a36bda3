import { createRequire } from 'node:module';

/**
 * node:http's functions, loaded with require: an ESM `import … from 'node:http'` builds the
 * module's whole namespace, whose lazy `WebSocket` getter loads and compiles Node's bundled
 * undici (~35 ms of CPU on this machine, one fifteenth of a start; required, ~4 ms). Types come
 * from `import type`, which costs nothing.
 */
const http: typeof import('node:http') = createRequire(import.meta.url)('node:http');

export const { createServer, request, STATUS_CODES, ServerResponse } = http;
