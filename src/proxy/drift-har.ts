import { readFile } from 'node:fs/promises';
import { HarError } from './drift-errors.js';

export { HarError };

/** One recorded exchange as the replay reads it: what the client sent and what the real service answered. */
export interface RecordedExchange {
  /** 1-based position in the HAR's entries, as reports name it. */
  entry: number;
  method: string;
  /** The path as recorded (the upstream's, with any prefix it had). */
  path: string;
  /** The query's parameters in order. */
  query: Array<[name: string, value: string]>;
  /** The request body as JSON, undefined without one (or when it is no JSON). */
  body: unknown;
  status: number;
  /** The answer as JSON, undefined when it had none or it is no JSON. */
  response: unknown;
  /** Whether the client sent an Authorization header (its value is masked in the file). */
  authorized: boolean;
  /** A webhook the proxy took on `/_proxy/webhooks` (`_webhook: true`): the body is the event. */
  webhook: boolean;
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

function json(text: unknown, encoding: unknown): unknown {
  if (typeof text !== 'string' || text === '') return undefined;
  const decoded = encoding === 'base64' ? Buffer.from(text, 'base64').toString('utf8') : text;
  try {
    return JSON.parse(decoded) as unknown;
  } catch {
    return undefined;
  }
}

/** The exchanges of a HAR 1.2 log, in recorded order; a HarError naming the first thing wrong. */
export function parseHar(text: string, file = 'the HAR file'): RecordedExchange[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text) as unknown;
  } catch (error) {
    throw new HarError(`${file} is not JSON (${error instanceof Error ? error.message : String(error)}): a HAR file is one JSON object`);
  }
  const log = isObject(parsed) ? parsed.log : undefined;
  if (!isObject(log) || !Array.isArray(log.entries)) throw new HarError(`${file} is no HAR log: it needs {"log": {"entries": [...]}}`);
  return log.entries.map((raw: unknown, i): RecordedExchange => {
    const where = `${file}: entry ${i + 1}`;
    if (!isObject(raw) || !isObject(raw.request) || !isObject(raw.response)) throw new HarError(`${where} has no request or response object`);
    const { request, response } = raw;
    if (typeof request.method !== 'string' || typeof request.url !== 'string' || !URL.canParse(request.url)) throw new HarError(`${where}: request.method and an absolute request.url are required`);
    if (typeof response.status !== 'number' || !Number.isInteger(response.status)) throw new HarError(`${where}: response.status must be an integer`);
    const url = new URL(request.url);
    const postData = isObject(request.postData) ? request.postData : {};
    const content = isObject(response.content) ? response.content : {};
    return {
      entry: i + 1,
      method: request.method.toUpperCase(),
      path: url.pathname,
      query: [...url.searchParams],
      body: json(postData.text, undefined),
      status: response.status,
      response: json(content.text, content.encoding),
      authorized: Array.isArray(request.headers) && request.headers.some((h: unknown) => isObject(h) && typeof h.name === 'string' && h.name.toLowerCase() === 'authorization'),
      webhook: raw._webhook === true,
    };
  });
}

export async function readHar(file: string): Promise<RecordedExchange[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new HarError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  return parseHar(text, file);
}
