import { renameSync, writeFileSync } from 'node:fs';
import { STATUS_CODES } from 'node:http';
import { MASK, maskHeader, maskJson, maskJsonText, maskQueryValue } from '../http/masking.js';
import { VERSION } from '../version.js';
import { decodedBody, isJsonType, type Finding } from './check.js';

export interface HarHeader {
  name: string;
  value: string;
}

/** One entry of HAR 1.2 (http://www.softwareishard.com/blog/har-12-spec/), with the proxy's `_findings`. */
export interface HarEntry {
  startedDateTime: string;
  time: number;
  request: {
    method: string;
    url: string;
    httpVersion: string;
    cookies: never[];
    headers: HarHeader[];
    queryString: HarHeader[];
    postData?: { mimeType: string; text: string };
    headersSize: -1;
    bodySize: number;
  };
  response: {
    status: number;
    statusText: string;
    httpVersion: string;
    cookies: never[];
    headers: HarHeader[];
    content: { size: number; mimeType: string; text: string; encoding?: 'base64' };
    redirectURL: string;
    headersSize: -1;
    bodySize: number;
  };
  cache: Record<string, never>;
  timings: { send: number; wait: number; receive: number };
  _findings: Finding[];
  /** A webhook the proxy received at /_proxy/webhooks (its request is the sender's, its response the app's answer); absent on exchanges. */
  _webhook?: true;
}

export interface HarLog {
  log: { version: '1.2'; creator: { name: string; version: string }; entries: HarEntry[] };
}

/** What the proxy saw of one exchange, before masking. */
export interface ExchangeRecord {
  started: Date;
  ms: number;
  method: string;
  /** The upstream URL the request went to. */
  url: URL;
  requestHeaders: Record<string, string | string[] | undefined>;
  requestBody: Buffer;
  status: number;
  responseHeaders: Record<string, string | string[] | undefined>;
  responseBody: Buffer;
  findings: Finding[];
  /** A webhook received at /_proxy/webhooks, not an exchange with the upstream: `url` is where it was sent, the proxy's own. */
  webhook?: boolean;
}

/**
 * `Authorization` as the contract shows it: the scheme and `****`, nothing of the credential
 * (the request log's mask keeps a key's last four; a HAR file is shared more widely).
 */
function maskHarHeader(name: string, value: string): string {
  const lower = name.toLowerCase();
  if (lower === 'authorization' || lower === 'proxy-authorization') {
    const scheme = /^(\S+)\s/.exec(value)?.[1];
    return scheme ? `${scheme} ${MASK}` : MASK;
  }
  return maskHeader(lower, value);
}

function headerList(headers: Record<string, string | string[] | undefined>): HarHeader[] {
  return Object.entries(headers).flatMap(([name, value]) => (value === undefined ? [] : (Array.isArray(value) ? value : [value]).map((v) => ({ name, value: maskHarHeader(name, v) }))));
}

const contentTypeOf = (headers: Record<string, string | string[] | undefined>): string => {
  const value = headers['content-type'];
  return (Array.isArray(value) ? value[0] : value) ?? '';
};

/** A body's text with its secrets and card data masked: parsed and masked field by field when JSON, else by the text masks. */
function maskedText(raw: Buffer, mimeType: string, encoding: string | string[] | undefined): string {
  // HAR's content.text is the decoded body (its size the decoded one too); one that cannot be decoded is kept as base64.
  const bytes = decodedBody(raw, encoding);
  if (bytes === undefined) return raw.toString('base64');
  const text = bytes.toString('utf8');
  if (isJsonType(mimeType) === true) {
    try {
      return JSON.stringify(maskJson(JSON.parse(text) as unknown));
    } catch {
      // Not JSON after all: the text masks still find a quoted secret or a card number in it.
    }
  }
  return maskJsonText(text);
}

/** The HAR entry of an exchange, everything secret masked. */
export function harEntry(record: ExchangeRecord): HarEntry {
  const url = new URL(record.url);
  const queryString = [...url.searchParams].map(([name, value]) => ({ name, value: maskQueryValue(name, value) }));
  const masked = new URLSearchParams(queryString.map(({ name, value }) => [name, value]));
  url.search = queryString.length > 0 ? masked.toString() : '';
  const requestType = contentTypeOf(record.requestHeaders);
  const responseType = contentTypeOf(record.responseHeaders);
  const decoded = decodedBody(record.responseBody, record.responseHeaders['content-encoding']);
  const responseText = { text: maskedText(record.responseBody, responseType, record.responseHeaders['content-encoding']), size: (decoded ?? record.responseBody).length, base64: decoded === undefined };
  return {
    startedDateTime: record.started.toISOString(),
    time: record.ms,
    request: {
      method: record.method,
      url: url.toString(),
      httpVersion: 'HTTP/1.1',
      cookies: [],
      headers: headerList(record.requestHeaders),
      queryString,
      ...(record.requestBody.length > 0 && { postData: { mimeType: requestType, text: maskedText(record.requestBody, requestType, record.requestHeaders['content-encoding']) } }),
      headersSize: -1,
      bodySize: record.requestBody.length,
    },
    response: {
      status: record.status,
      statusText: STATUS_CODES[record.status] ?? '',
      httpVersion: 'HTTP/1.1',
      cookies: [],
      headers: headerList(record.responseHeaders),
      content: { size: responseText.size, mimeType: responseType, text: responseText.text, ...(responseText.base64 && { encoding: 'base64' }) },
      redirectURL: '',
      headersSize: -1,
      bodySize: record.responseBody.length,
    },
    cache: {},
    timings: { send: 0, wait: record.ms, receive: 0 },
    _findings: record.findings,
    ...(record.webhook === true && { _webhook: true as const }),
  };
}

/**
 * A HAR file written as the session goes: after each exchange the whole log is written to a
 * file beside it and renamed over it, so that the file is at every moment a complete HAR
 * (a proxy killed mid-session leaves every exchange recorded until then, and never half an
 * entry). The rewrite costs the session's size per exchange: a recording is a debugging
 * session of some hundreds of exchanges, not a load test.
 */
export class HarRecorder {
  private readonly entries: HarEntry[] = [];
  private readonly temporary: string;

  constructor(private readonly file: string) {
    this.temporary = `${file}.${process.pid}.tmp`;
    this.flush();
  }

  record(record: ExchangeRecord): void {
    this.entries.push(harEntry(record));
    this.flush();
  }

  private flush(): void {
    const log: HarLog = { log: { version: '1.2', creator: { name: 'payments-sandbox proxy', version: VERSION }, entries: this.entries } };
    writeFileSync(this.temporary, `${JSON.stringify(log, null, 2)}\n`);
    renameSync(this.temporary, this.file);
  }
}
