import { setImmediate as turnEnd } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AnswerWriter } from '../../src/http/reply.js';

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

