import express, { type Express, type Response } from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { JsonTexts } from '../../src/http/json-text.js';

/** One app's kept texts, as a sandbox has them. */
function installJsonText(app: Express): JsonTexts {
  const texts = new JsonTexts();
  texts.install(app);
  return texts;
}

/** src/http/json-text.ts: a kept body goes out byte for byte as express's own res.json would send it. */

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

async function serve(app: Express): Promise<string> {
  const server = app.listen(0, '127.0.0.1');
  servers.push(server);
  await new Promise((resolve) => server.once('listening', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const BODIES: Record<string, () => object> = {
  transaction: () => ({ id: '100000001', status: 'PENDING', amount: 15000, qrCode: 'iVBORw0KGgo'.repeat(100), payer: { name: 'Maria Silva', cpf: null } }),
  unicode: () => ({ name: 'São Paulo — café ✓ 🚀', quote: '"</script>"\n\t\\' }),
  array: () => [1, 'two', { three: 3 }],
  empty: () => ({}),
};

function app(kept: boolean, contentType?: string): Express {
  const a = express();
  a.set('etag', false);
  const texts = installJsonText(a);
  a.get('/:name', (req, res) => {
    const make = BODIES[req.params.name]!;
    if (contentType) res.type(contentType);
    res.status(201).json(kept ? texts.keep(make()) : make());
  });
  return a;
}

async function fetchRaw(base: string, path: string): Promise<{ status: number; type: string | null; length: string | null; text: string }> {
  const r = await fetch(base + path);
  return { status: r.status, type: r.headers.get('content-type'), length: r.headers.get('content-length'), text: await r.text() };
}

describe('kept JSON texts', () => {
  it('go out with the status, Content-Type, Content-Length and bytes of express res.json, the first time and every time after', async () => {
    for (const contentType of [undefined, 'application/vnd.sandbox+json']) {
      const [plain, kept] = await Promise.all([serve(app(false, contentType)), serve(app(true, contentType))]);
      for (const name of Object.keys(BODIES)) {
        const expected = await fetchRaw(plain, `/${name}`);
        expect(expected.status).toBe(201);
        expect(await fetchRaw(kept, `/${name}`), name).toEqual(expected);
      }
    }
  });

  it('serializes a kept body once, and the body cannot change after it is kept', async () => {
    const a = express();
    const body = installJsonText(a).keep({ n: 1 });
    const stringify = JSON.stringify;
    let calls = 0;
    JSON.stringify = ((...args: Parameters<typeof JSON.stringify>) => {
      if (args[0] === body) calls++;
      return stringify(...args);
    }) as typeof JSON.stringify;
    try {
      a.get('/', (_req, res) => res.json(body));
      const base = await serve(a);
      for (let i = 0; i < 3; i++) expect(await (await fetch(base)).text()).toBe('{"n":1}');
    } finally {
      JSON.stringify = stringify;
    }
    expect(calls).toBe(1);
    expect(() => {
      (body as { n: number }).n = 2;
    }).toThrow(TypeError);
  });

  it('leave wrappers installed after them (response validation) seeing the body object', async () => {
    const a = express();
    const texts = installJsonText(a);
    const seen: unknown[] = [];
    const json = a.response.json;
    a.response.json = function (this: Response, body?: unknown) {
      seen.push(body);
      return json.call(this, body);
    };
    const body = texts.keep({ ok: true });
    a.get('/', (_req, res) => res.json(body));
    expect(await (await fetch(await serve(a))).json()).toEqual({ ok: true });
    expect(seen).toEqual([body]);
    expect(seen[0]).toBe(body);
  });

  it('are refused for an app whose JSON settings they would not follow', () => {
    for (const [setting, value] of [['json spaces', 2], ['json escape', true], ['json replacer', (_k: string, v: unknown) => v]] as const) {
      const a = express();
      a.set(setting, value);
      expect(() => installJsonText(a), setting).toThrow(setting);
    }
  });
});
