import { describe, expect, it } from 'vitest';
import { MESSAGE_SEPARATOR, Notifier, merged } from '../../../src/store/postgres/notifier.js';
import type { Logger } from '../../../src/store/types.js';

const silentLogger = (): Logger => ({ warn: () => undefined, info: () => undefined });

describe('merged', () => {
  it("puts a channel's messages in as few notifications as fit, one per line, each channel's in order", () => {
    const batch = [
      { channel: 'bus', payload: 'a' },
      { channel: 'jobs', payload: '1' },
      { channel: 'bus', payload: 'b' },
      { channel: 'bus', payload: 'x'.repeat(7_897) },
      { channel: 'jobs', payload: '2' },
      { channel: 'bus', payload: 'c' },
    ];
    expect(merged(batch)).toEqual([
      { channel: 'bus', payload: ['a', 'b'].join(MESSAGE_SEPARATOR) },
      { channel: 'jobs', payload: ['1', '2'].join(MESSAGE_SEPARATOR) },
      // 'a\nb' (3 bytes), a line break and 7,897 bytes pass 7,900: a notification of its own from there.
      { channel: 'bus', payload: ['x'.repeat(7_897), 'c'].join(MESSAGE_SEPARATOR) },
    ]);
    for (const { payload } of merged(batch)) expect(Buffer.byteLength(payload)).toBeLessThan(8_000);
  });
});

describe('Notifier', () => {
  it('sends what a moment queued as one statement of merged notifications', async () => {
    const sent: { text: string; values: readonly unknown[] }[] = [];
    const notifier = new Notifier(async (text, values) => {
      sent.push({ text, values });
    }, silentLogger());
    notifier.queue('bus', '{"m":1}');
    notifier.queue('versions', '3 acc_1');
    notifier.queue('bus', '{"m":2}');
    await notifier.drain();
    await new Promise((resolve) => setTimeout(resolve, 20));
    await notifier.drain();
    expect(sent).toEqual([{ text: 'SELECT pg_notify($1, $2), pg_notify($3, $4)', values: ['bus', '{"m":1}\n{"m":2}', 'versions', '3 acc_1'] }]);
  });

  it('refuses a message with a line break, which would be split into two', () => {
    const notifier = new Notifier(async () => undefined, silentLogger());
    expect(() => notifier.queue('bus', 'a\nb')).toThrow(/line break/);
  });
});
