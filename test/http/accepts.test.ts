import { describe, expect, it } from 'vitest';
import { Accepts } from '../../src/http/accepts.js';
import { ListTurns, LIST_GAP_WHILE_ACCEPTING_MS, LISTS_PER_TURN } from '../../src/http/list-turns.js';
import { Turns } from '../../src/http/reply.js';

/** One turn of the event loop: setImmediate callbacks queued before this one have run. */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('Accepts', () => {
  it('tells each watcher whether a connection came since that watcher last asked', () => {
    const accepts = new Accepts();
    const lists = accepts.watch();
    const pieces = accepts.watch();
    expect(lists()).toBe(false);
    accepts.note();
    accepts.note();
    expect(lists()).toBe(true);
    expect(lists()).toBe(false);
    // The other watcher has not asked since: it still sees them.
    expect(pieces()).toBe(true);
    expect(pieces()).toBe(false);
  });
});

describe('ListTurns while connections are accepted', () => {
  /** `count` list requests entered at once; resolves with how many had been let through after each of `turns` turns. */
  async function letThrough(lists: ListTurns, count: number, turns: number, between: () => void = () => undefined): Promise<number[]> {
    let entered = 0;
    for (let i = 0; i < count; i++) void lists.enter().then(() => entered++);
    const seen: number[] = [];
    for (let t = 0; t < turns; t++) {
      await turn();
      seen.push(entered);
      between();
    }
    return seen;
  }

  it('lets LISTS_PER_TURN through a turn while no connection comes', async () => {
    const seen = await letThrough(new ListTurns(), LISTS_PER_TURN * 3, 3);
    expect(seen).toEqual([LISTS_PER_TURN, LISTS_PER_TURN * 2, LISTS_PER_TURN * 3]);
  });

  it('lets one through per LIST_GAP_WHILE_ACCEPTING_MS while every turn accepts one, LISTS_PER_TURN again once none comes', async () => {
    const accepts = new Accepts();
    let now = 1_000;
    let turns = 0;
    const lists = new ListTurns(LISTS_PER_TURN, accepts.watch(), () => now);
    accepts.note();
    // While accepting, each turn accepts another connection; the clock moves a quarter of the gap a turn.
    const seen = await letThrough(lists, 20, 10, () => {
      // The last connection comes in the 8th turn.
      if (++turns < 8) accepts.note();
      now += LIST_GAP_WHILE_ACCEPTING_MS / 4;
    });
    expect(seen).toEqual([1, 1, 1, 1, 2, 2, 2, 2, 2 + LISTS_PER_TURN, 2 + LISTS_PER_TURN * 2]);
  });
});

describe('Turns while connections are accepted', () => {
  it('runs one piece in a turn after one that accepted a connection, every ready piece otherwise', async () => {
    const accepts = new Accepts();
    const turns = new Turns(accepts.watch());
    let ran = 0;
    for (let i = 0; i < 5; i++) turns.next(() => ran++);
    accepts.note();
    await turn();
    expect(ran).toBe(1);
    await turn();
    expect(ran).toBe(5);
  });
});
