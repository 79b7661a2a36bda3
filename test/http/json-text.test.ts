import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Accounts } from '../../src/accounts/accounts.js';
import { systemClock } from '../../src/clock.js';
import { JsonTexts } from '../../src/http/json-text.js';
import { ReplyStage } from '../../src/http/reply.js';
import { RequestLog } from '../../src/http/request-log.js';
import { RequestLogging } from '../../src/http/request-logging.js';
import { EmbeddedRepository } from '../../src/store/embedded/repository.js';

/** src/http/json-text.ts: a kept body goes out byte for byte as its JSON.stringify text, the first time and every time after. */

const BODIES: Record<string, () => object> = {
  transaction: () => ({ id: '100000001', status: 'PENDING', amount: 15000, qrCode: 'iVBORw0KGgo'.repeat(100), payer: { name: 'Maria Silva', cpf: null } }),
  unicode: () => ({ name: 'São Paulo — café ✓ 🚀', quote: '"</script>"\n\t\\' }),
  array: () => [1, 'two', { three: 3 }],
  empty: () => ({}),
};

let server: Server;
let base: string;
let repository: EmbeddedRepository;
const texts = new JsonTexts();
/** Each body kept once, answered on every request for it. */
const kept = new Map(Object.entries(BODIES).map(([name, make]) => [name, texts.keep(make())]));

beforeAll(async () => {
  repository = await EmbeddedRepository.open({ now: () => systemClock.nowMs() });
  const logging = new RequestLogging({ log: new RequestLog(10), accounts: new Accounts({ repository, clock: systemClock }), logger: pino({ level: 'silent' }), nowMs: Date.now });
  const replies = new ReplyStage(texts, undefined);
  server = createServer((req, res) => {
    const exchange = logging.open(req, res);
    const [, mode, name] = exchange.request.path.split('/');
    const make = BODIES[name ?? ''];
    if (!make) return res.writeHead(404).end();
    replies.send(exchange, { status: 201, json: mode === 'kept' ? kept.get(name ?? '') : make() });
  }).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await repository.close();
});

async function fetchRaw(path: string): Promise<{ status: number; type: string | null; length: string | null; text: string }> {
  const r = await fetch(base + path);
  return { status: r.status, type: r.headers.get('content-type'), length: r.headers.get('content-length'), text: await r.text() };
}

describe('kept JSON texts', () => {
  it('go out with the status, Content-Type, Content-Length and bytes of a body serialized on the spot, the first time and every time after', async () => {
    for (const name of Object.keys(BODIES)) {
      const expected = await fetchRaw(`/fresh/${name}`);
      expect(expected).toMatchObject({ status: 201, type: 'application/json; charset=utf-8', text: JSON.stringify(BODIES[name]?.()) });
      expect(Number(expected.length)).toBe(Buffer.byteLength(expected.text));
      for (let i = 0; i < 2; i++) expect(await fetchRaw(`/kept/${name}`), name).toEqual(expected);
    }
  });

  it('serializes a kept body once, and the body cannot change after it is kept', () => {
    const own = new JsonTexts();
    const body = own.keep({ n: 1 });
    const first = own.textOf(body);
    expect(first?.toString()).toBe('{"n":1}');
    expect(own.textOf(body)).toBe(first);
    expect(() => {
      (body as { n: number }).n = 2;
    }).toThrow(TypeError);
  });

  it('keeps nothing for a body that was not registered, nor for another sandbox', () => {
    const body = texts.keep({ mine: true });
    expect(new JsonTexts().textOf(body)).toBeUndefined();
    expect(texts.textOf({ mine: true })).toBeUndefined();
    expect(texts.textOf('text')).toBeUndefined();
    expect(texts.textOf(null)).toBeUndefined();
  });
});
