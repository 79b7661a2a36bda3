import { Readable } from 'node:stream';
import { describe as suite, expect, it } from 'vitest';
import { describe, excerpt } from '../../src/webhooks/answer-text.js';

suite("the delivery log's wording of an answer and a failure", () => {
  it('excerpt keeps the first KiB of a body, as UTF-8, and stops reading there', async () => {
    let destroyed = false;
    const chunks = [Buffer.from('a'.repeat(700)), Buffer.from('b'.repeat(700)), Buffer.from('c'.repeat(700))];
    let read = 0;
    const body = {
      async *[Symbol.asyncIterator]() {
        for (const chunk of chunks) {
          read++;
          yield chunk;
        }
      },
      destroy: () => (destroyed = true),
    };
    const text = await excerpt(body);
    expect(text).toBe('a'.repeat(700) + 'b'.repeat(324));
    expect(read).toBe(2);
    expect(destroyed).toBe(true);
    await expect(excerpt(Readable.from([Buffer.from('ok')]))).resolves.toBe('ok');
    await expect(excerpt(Readable.from([]))).resolves.toBe('');
  });

  it("describe gives an error's code (its own or its cause's) before its message", () => {
    expect(describe(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' }))).toBe('ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9');
    expect(describe(new Error('fetch failed', { cause: Object.assign(new Error('reset'), { code: 'ECONNRESET' }) }))).toBe('ECONNRESET: fetch failed');
    expect(describe(new Error('plain'))).toBe('plain');
    expect(describe('a string')).toBe('a string');
  });
});
