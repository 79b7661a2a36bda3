import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { setImmediate as turnEnd } from 'node:timers/promises';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { Accounts } from '../../src/accounts/accounts.js';
import { systemClock } from '../../src/clock.js';
import { JsonTexts } from '../../src/http/json-text.js';
import { AnswerWriter, ReplyStage, type Outgoing } from '../../src/http/reply.js';
import { RequestLog } from '../../src/http/request-log.js';
import { RequestLogging, type Answer } from '../../src/http/request-logging.js';
import { EmbeddedRepository } from '../../src/store/embedded/repository.js';
import { MemoryBudget } from '../../src/sandbox/memory-budget.js';

// One sandbox's writer, as src/app.ts makes it.
let writer = new AnswerWriter();
const writeAtTurnEnd = (write: () => void, failed: (error: unknown) => void): void => writer.write(write, failed);
const afterTurnAnswers = (): Promise<void> => writer.afterAnswers();

beforeEach(() => {
  writer = new AnswerWriter();
});

describe('AnswerWriter.write', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('writes nothing during the turn, then every answer of the turn in the order it was queued', async () => {
    const written: string[] = [];
    const failed = (error: unknown) => written.push(`failed ${String(error)}`);
    writeAtTurnEnd(() => written.push('first'), failed);
    // Promise continuations (what an awaited commit resolves in) still belong to the turn.
    await Promise.resolve();
    writeAtTurnEnd(() => written.push('second'), failed);
    process.nextTick(() => writeAtTurnEnd(() => written.push('third'), failed));
    await new Promise<void>((resolve) => process.nextTick(resolve));
    expect(written).toEqual([]);
    await turnEnd();
    expect(written).toEqual(['first', 'second', 'third']);
  });

  it('a write that throws goes to its own failure callback; the others are still written', async () => {
    const written: string[] = [];
    const failures: unknown[] = [];
    const boom = new Error('header refused');
    writeAtTurnEnd(() => written.push('before'), (error) => failures.push(['before', error]));
    writeAtTurnEnd(() => {
      throw boom;
    }, (error) => failures.push(['throwing', error]));
    writeAtTurnEnd(() => written.push('after'), (error) => failures.push(['after', error]));
    await turnEnd();
    expect(written).toEqual(['before', 'after']);
    expect(failures).toEqual([['throwing', boom]]);
  });

  it('a write queued while the batch is written waits for the next turn, and is written then', async () => {
    const written: string[] = [];
    const failed = (): void => undefined;
    writeAtTurnEnd(() => {
      written.push('outer');
      writeAtTurnEnd(() => written.push('inner'), failed);
    }, failed);
    await turnEnd();
    expect(written).toEqual(['outer']);
    await turnEnd();
    expect(written).toEqual(['outer', 'inner']);
  });

  it("a test's fake timers do not hold answers back", async () => {
    vi.useFakeTimers({ toFake: ['setImmediate', 'setTimeout', 'queueMicrotask'] });
    const written: string[] = [];
    writeAtTurnEnd(() => written.push('answer'), () => undefined);
    vi.useRealTimers();
    await turnEnd();
    expect(written).toEqual(['answer']);
  });
});

describe('AnswerWriter.afterAnswers', () => {
  it("resolves after every answer of the turn is written, those queued after it included", async () => {
    const order: string[] = [];
    const failed = (): void => undefined;
    writeAtTurnEnd(() => order.push('answer 1'), failed);
    const followed = afterTurnAnswers().then(() => order.push('webhook'));
    writeAtTurnEnd(() => order.push('answer 2'), failed);
    await Promise.resolve();
    writeAtTurnEnd(() => order.push('answer 3'), failed);
    await followed;
    expect(order).toEqual(['answer 1', 'answer 2', 'answer 3', 'webhook']);
  });
});


describe('ReplyStage.send', () => {
  let server: Server;
  let base: string;
  let repository: EmbeddedRepository;
  /** What each path answers, and what the exchange then recorded of the answer. */
  const replies: Record<string, Outgoing> = {
    '/json': { status: 201, json: { name: 'São Paulo' }, headers: { 'x-thing': 'made' } },
    '/text': { status: 200, bytes: '<p>olá</p>', contentType: 'text/html' },
    '/latin': { status: 200, bytes: 'plain', contentType: 'text/plain; charset=latin1' },
    '/png': { status: 200, bytes: Buffer.from([0x89, 0x50, 0x4e, 0x47]), contentType: 'image/png' },
    '/none': { status: 204, bytes: 'ignored', contentType: 'text/plain' },
    '/see': { status: 303, redirect: '/elsewhere?x=1' },
  };
  const recorded = new Map<string, Answer | undefined>();

  beforeAll(async () => {
    repository = await EmbeddedRepository.open({ now: () => systemClock.nowMs() });
    const logging = new RequestLogging({ log: new RequestLog(10), accounts: new Accounts({ repository, clock: systemClock }), logger: pino({ level: 'silent' }), nowMs: Date.now });
    const stage = new ReplyStage(new JsonTexts(), undefined);
    server = createServer((req, res) => {
      const exchange = logging.open(req, res);
      const { path } = exchange.request;
      if (path === '/faulted') exchange.fault = 'flt_1';
      stage.send(exchange, replies[path] ?? { status: 200, json: {} });
      recorded.set(path, exchange.answer);
    }).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await repository.close();
  });

  it('writes JSON as UTF-8 with its length, the reply\'s headers and the trace id, and tells the exchange what it wrote', async () => {
    const res = await fetch(`${base}/json`);
    const text = await res.text();
    expect(res.status).toBe(201);
    expect(text).toBe('{"name":"São Paulo"}');
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(Number(res.headers.get('content-length'))).toBe(Buffer.byteLength(text));
    expect(res.headers.get('x-thing')).toBe('made');
    expect(res.headers.get('x-trace-id')).toMatch(/^[0-9a-f]{32}$/);
    expect(recorded.get('/json')).toEqual({ status: 201, contentType: 'application/json; charset=utf-8', body: text, bytes: Buffer.byteLength(text), hint: undefined });
  });

  it('says UTF-8 of text it writes, whatever charset the reply named; bytes go out with their type as it is', async () => {
    expect((await fetch(`${base}/text`)).headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect((await fetch(`${base}/latin`)).headers.get('content-type')).toBe('text/plain; charset=utf-8');
    const png = await fetch(`${base}/png`);
    expect(png.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await png.arrayBuffer())).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
  });

  it('sends a 204 without content, and a redirect with its Location and a line saying where', async () => {
    const none = await fetch(`${base}/none`);
    expect(none.status).toBe(204);
    expect(none.headers.get('content-type')).toBeNull();
    expect(await none.text()).toBe('');
    const see = await fetch(`${base}/see`, { redirect: 'manual' });
    expect(see.status).toBe(303);
    expect(see.headers.get('location')).toBe('/elsewhere?x=1');
    expect(await see.text()).toBe('See Other. Redirecting to /elsewhere?x=1');
  });

  it('marks an answer a fault rule made or changed with the rule', async () => {
    expect((await fetch(`${base}/faulted`)).headers.get('x-sandbox-fault')).toBe('flt_1');
    expect((await fetch(`${base}/json`)).headers.get('x-sandbox-fault')).toBeNull();
  });
});

describe('ReplyStage, a long answer whose client left before its turn', () => {
  it('holds nothing in the memory budget and writes nothing (its close came before the answer)', async () => {
    const repository = await EmbeddedRepository.open({ now: () => systemClock.nowMs() });
    const logging = new RequestLogging({ log: new RequestLog(10), accounts: new Accounts({ repository, clock: systemClock }), logger: pino({ level: 'silent' }), nowMs: Date.now });
    const budget = new MemoryBudget({ limitBytes: 64 * 1024 * 1024, sweepMs: 0 });
    const stage = new ReplyStage(new JsonTexts(), undefined, budget);
    // A page well past the streaming threshold.
    const page = { data: Array.from({ length: 200 }, (_, i) => ({ id: `item_${i}`, text: 'x'.repeat(1_000) })), hasMore: false };
    let answered: () => void = () => undefined;
    const sent = new Promise<void>((resolve) => (answered = resolve));
    let asked: () => void = () => undefined;
    const arrived = new Promise<void>((resolve) => (asked = resolve));
    const server = createServer((req, res) => {
      const exchange = logging.open(req, res);
      asked();
      // The answer's turn comes after the client has gone, as it does behind a load.
      req.socket.once('close', () => {
        stage.send(exchange, { status: 200, json: page });
        answered();
      });
    }).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
      socket.on('error', () => undefined);
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write('GET /page HTTP/1.1\r\nHost: x\r\n\r\n');
      await arrived;
      socket.destroy();
      await sent;
      budget.sweep();
      expect(budget.report().inUseBytes).toBe(0);
      budget.sweep();
      expect(budget.report().byKind.answers).toBe(0);
    } finally {
      budget.close();
      await new Promise((resolve) => server.close(resolve));
      await repository.close();
    }
  });
});
