import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RequestFacts } from '../../src/http/request.js';
import { createAccount } from '../helpers/catalog.js';
import { RawConnection, requestHead } from '../helpers/raw-http.js';
import { basic, startSandbox, type TestSandbox } from '../helpers/sandbox.js';

/**
 * Each fact about a request is worked out once, at the edge (src/http/request.ts), and every
 * stage reads it (issue 45, item 1). Before, four regexes read the media type, three rules said
 * whether there was a body and two parsers read the query, and the copies disagreed:
 * `application/a+b+json` was read as JSON by the body stage and refused 415 by validate, a
 * Content-Length of 0 was a body to one and none to the others, the request log kept a
 * `#fragment` in the last query value. Each request below is sent once, and what the body
 * stage kept (the log's requestBody), what validate answered (the status) and what the request
 * log shows (its query, its body) must tell one story.
 */

let sb: TestSandbox;
let key: string;
let port: number;
beforeAll(async () => {
  sb = await startSandbox();
  port = Number(new URL(sb.url).port);
  key = (await createAccount(sb)).account.secretKey;
});
afterAll(() => sb.stop());

type Framing = 'absent' | 'length' | 'chunked';

interface Sent {
  status: number;
  body: Record<string, unknown>;
  traceId: string;
}

/**
 * One request on a connection of its own, by hand: node's client would send `Content-Length: 0`
 * for a POST without a body, and a request here must be able to declare none at all.
 */
async function send(method: string, target: string, headers: Record<string, string>, body: string | undefined, framing: Framing): Promise<Sent> {
  const bytes = Buffer.from(body ?? '');
  const framed: Record<string, string> = framing === 'length' ? { 'content-length': String(bytes.length) } : framing === 'chunked' ? { 'transfer-encoding': 'chunked' } : {};
  const chunks = framing !== 'chunked' ? bytes.toString('utf8') : `${bytes.length > 0 ? `${bytes.length.toString(16)}\r\n${bytes.toString('utf8')}\r\n` : ''}0\r\n\r\n`;
  const connection = await RawConnection.open(port);
  try {
    connection.write(requestHead(method, target, { authorization: basic(key), ...headers, ...framed }) + chunks);
    const answer = await connection.answer();
    return { status: answer.status, body: (answer.body === '' ? {} : JSON.parse(answer.body)) as Record<string, unknown>, traceId: String(answer.headers['x-trace-id']) };
  } finally {
    connection.destroy();
  }
}

interface LoggedEntry {
  status: number;
  query: Record<string, unknown>;
  requestBody: unknown;
}

async function logged(traceId: string): Promise<LoggedEntry> {
  const res = await fetch(`${sb.url}/_sandbox/requests?traceId=${traceId}`, { headers: { authorization: basic(key) } });
  const { data } = (await res.json()) as { data: LoggedEntry[] };
  expect(data, traceId).toHaveLength(1);
  return data[0]!;
}

const PRODUCT = '{"name":"Facts"}';

describe('the media type: one reading for shared use, the body stage, validate and the request log', () => {
  const cases: Array<{ type: string | undefined; status: number; read: boolean }> = [
    { type: 'application/json', status: 201, read: true },
    { type: 'application/a+b+json', status: 201, read: true },
    { type: 'application/json; charset=utf-8', status: 201, read: true },
    { type: 'APPLICATION/JSON ; Charset="UTF-8"', status: 201, read: true },
    { type: 'text/plain', status: 415, read: false },
    { type: 'text/application/json', status: 415, read: false },
    { type: 'multipart/form-data; boundary=x', status: 415, read: false },
    { type: undefined, status: 415, read: false },
  ];
  for (const { type, status, read } of cases) {
    it(`${type ?? 'no Content-Type'}: ${status}, and the body ${read ? 'read and logged' : 'left unread and noted'}`, async () => {
      for (const framing of ['length', 'chunked'] as const) {
        const sent = await send('POST', '/v2/products', type === undefined ? {} : { 'content-type': type }, PRODUCT, framing);
        expect(sent.status, `${framing}: ${JSON.stringify(sent.body)}`).toBe(status);
        if (status === 415) expect(sent.body).toEqual({ status: 415, error: 'Content-Type must be application/json' });
        const entry = await logged(sent.traceId);
        expect(entry.status).toBe(status);
        if (read) expect(entry.requestBody).toEqual({ name: 'Facts' });
        else expect(entry.requestBody, framing).toMatch(type?.startsWith('multipart/') ? /^\[multipart\/form-data body of \d+ bytes, not recorded\]$/ : /^\[body of .* not read: its Content-Type is .*, not JSON\]$/);
      }
    });
  }

  it('a control call that changes state takes the same JSON types, and refuses the others before routing', async () => {
    for (const type of ['application/json', 'application/a+b+json', 'application/json; charset=utf-8']) {
      const sent = await send('POST', '/_sandbox/balance/credit', { 'content-type': type }, '{"amount":100}', 'length');
      expect(sent.status, `${type}: ${JSON.stringify(sent.body)}`).toBe(200);
      expect((await logged(sent.traceId)).requestBody).toEqual({ amount: 100 });
    }
    for (const type of ['text/plain', 'multipart/form-data; boundary=x']) {
      const sent = await send('POST', '/_sandbox/balance/credit', { 'content-type': type }, '{"amount":100}', 'length');
      expect(sent.status, type).toBe(415);
      expect(String(sent.body.message)).toMatch(new RegExp(`not ${type.split(';')[0]!}: a form of another site`));
    }
  });
});

describe('the body: one rule for whether there is one, whatever its framing', () => {
  /** What validate answers a product without its name, from the body stage's `{}` of an empty JSON body. */
  const NAMELESS = /name/;
  const cases: Array<{ label: string; type: string | undefined; body: string | undefined; framing: Framing; status: number; error: RegExp; logged: unknown }> = [
    { label: 'JSON, Content-Length 0', type: 'application/json', body: '', framing: 'length', status: 400, error: NAMELESS, logged: '' },
    { label: 'JSON, chunked and empty', type: 'application/json', body: '', framing: 'chunked', status: 400, error: NAMELESS, logged: '' },
    { label: 'JSON, no body at all', type: 'application/json', body: undefined, framing: 'absent', status: 400, error: /^request body is required$/, logged: null },
    // A declared body of another type is refused, empty or not (the body stage saw a body that is not JSON).
    { label: 'text, Content-Length 0', type: 'text/plain', body: '', framing: 'length', status: 415, error: /^Content-Type must be application\/json$/, logged: null },
    { label: 'text, chunked', type: 'text/plain', body: 'name=x', framing: 'chunked', status: 415, error: /^Content-Type must be application\/json$/, logged: expect.stringMatching(/^\[body of unknown length not read: its Content-Type is text\/plain, not JSON\]$/) },
    { label: 'text, no body at all', type: 'text/plain', body: undefined, framing: 'absent', status: 400, error: /^request body is required$/, logged: null },
    // Without a Content-Type an empty body is what `curl -X POST` and `fetch` without a body send.
    { label: 'no type, Content-Length 0', type: undefined, body: '', framing: 'length', status: 400, error: /^request body is required$/, logged: null },
    { label: 'no type, no body at all', type: undefined, body: undefined, framing: 'absent', status: 400, error: /^request body is required$/, logged: null },
    { label: 'no type, 6 bytes', type: undefined, body: 'name=x', framing: 'length', status: 415, error: /^Content-Type must be application\/json$/, logged: '[body of 6 bytes not read: its Content-Type is missing, not JSON]' },
  ];
  for (const c of cases) {
    it(`${c.label}: ${c.status}`, async () => {
      const sent = await send('POST', '/v2/products', c.type === undefined ? {} : { 'content-type': c.type }, c.body, c.framing);
      expect(sent.status, JSON.stringify(sent.body)).toBe(c.status);
      expect(String(sent.body.error)).toMatch(c.error);
      expect((await logged(sent.traceId)).requestBody).toEqual(c.logged);
    });
  }

  it('an empty JSON body gets the same answer with Content-Length 0 and chunked', async () => {
    const sized = await send('POST', '/v2/products', { 'content-type': 'application/json' }, '', 'length');
    const chunked = await send('POST', '/v2/products', { 'content-type': 'application/json' }, '', 'chunked');
    expect(sized.body).toEqual(chunked.body);
  });

  it('a body sent to an operation that takes none is noted unread, by its declared size', async () => {
    const sized = await send('GET', '/v2/products', { 'content-type': 'application/json' }, PRODUCT, 'length');
    expect(sized.status).toBe(200);
    expect((await logged(sized.traceId)).requestBody).toBe(`[body of ${PRODUCT.length} bytes not read: the request was not authenticated, or its operation takes no body]`);
    const empty = await send('GET', '/v2/products', {}, '', 'length');
    expect((await logged(empty.traceId)).requestBody).toBeNull();
  });
});

describe('the query: one parse for the handler, validate and the request log', () => {
  const externalId = 'a b+c/é&d';
  let productId: string;
  beforeAll(async () => {
    const created = await send('POST', '/v2/products', { 'content-type': 'application/json' }, JSON.stringify({ name: 'Queried', externalId }), 'length');
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    productId = String(created.body.id);
  });

  const ids = (sent: Sent): unknown[] => (sent.body.data as Array<{ id: string }>).map((p) => p.id);

  it('an encoded value: the handler finds what the log shows', async () => {
    const sent = await send('GET', `/v2/products?externalId=${encodeURIComponent(externalId).replace(/%20/g, '+')}`, {}, undefined, 'absent');
    expect(sent.status).toBe(200);
    expect(ids(sent)).toEqual([productId]);
    expect((await logged(sent.traceId)).query).toEqual({ externalId });
  });

  it('a #fragment is no part of the query: not of the value the handler filters by, nor of the one the log shows', async () => {
    const sent = await send('GET', `/v2/products?externalId=${encodeURIComponent(externalId)}#section`, {}, undefined, 'absent');
    expect(sent.status).toBe(200);
    expect(ids(sent)).toEqual([productId]);
    expect((await logged(sent.traceId)).query).toEqual({ externalId });
    const bare = await send('GET', '/v2/products?limit=1#externalId=x', {}, undefined, 'absent');
    expect(bare.status).toBe(200);
    expect((await logged(bare.traceId)).query).toEqual({ limit: '1' });
  });

  it('a repeated key is a list to validate and to the log alike', async () => {
    const sent = await send('GET', '/v2/products?limit=1&limit=2', {}, undefined, 'absent');
    expect(sent.status).toBe(400);
    expect(String(sent.body.error)).toMatch(/limit/);
    expect((await logged(sent.traceId)).query).toEqual({ limit: ['1', '2'] });
  });
});

describe('RequestFacts, the edge', () => {
  it('reads the target, the Content-Type and the framing once', () => {
    const facts = RequestFacts.of('POST', '/v2/products?a=1&a=2&b=%C3%A9+x#c=3', { 'content-type': 'Application/Vnd.Api+JSON; charset=UTF-8', 'content-length': '0' });
    expect(facts.path).toBe('/v2/products');
    expect({ ...facts.query }).toEqual({ a: ['1', '2'], b: 'é x' });
    expect(facts.query).toBe(facts.query);
    expect(facts.media).toMatchObject({ type: 'application/vnd.api+json', suffix: 'json', charset: 'utf-8', isJson: true, isMultipart: false });
    expect({ declares: facts.declaresBody, holds: facts.mayHoldBytes, bytes: facts.declaredBytes }).toEqual({ declares: true, holds: false, bytes: 0 });
    const chunked = RequestFacts.of('POST', '/upload', { 'content-type': 'multipart/form-data; boundary=z', 'transfer-encoding': 'chunked' });
    expect(chunked.media).toMatchObject({ type: 'multipart/form-data', isMultipart: true, isFormData: true, isJson: false });
    expect({ declares: chunked.declaresBody, holds: chunked.mayHoldBytes, bytes: chunked.declaredBytes }).toEqual({ declares: true, holds: true, bytes: undefined });
    const bare = RequestFacts.of('GET', '/x', {});
    expect({ media: bare.media, declares: bare.declaresBody, query: bare.hasQuery }).toEqual({ media: undefined, declares: false, query: false });
    for (const garbage of ['not a type', 'json', 'application/json/x', '/json']) expect(RequestFacts.of('POST', '/x', { 'content-type': garbage }).media, garbage).toMatchObject({ type: undefined, isJson: false });
  });
});
