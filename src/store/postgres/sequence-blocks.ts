import type { Db } from './db.js';
import type { Session } from './session.js';
import type { Frame } from './unit.js';

/**
 * Values of one PostgreSQL sequence, taken `size` at a time, so that a value costs no round trip
 * of its own: increasing within an instance; between instances, values interleave, and a restart
 * leaves the rest of a block unused (a gap). nextval ignores transactions: a value is never
 * handed out twice, even by a unit that rolls back.
 */
export class SequenceBlocks {
  private values: number[] = [];
  private refilling: Promise<void> | undefined;
  private readonly text: string;

  /**
   * @param sequence the sequence's quoted name
   * @param ensure makes sure the sequence exists (on a connection of its own) before the first block
   */
  constructor(
    private readonly db: Db,
    sequence: string,
    size: number,
    private readonly statement: string,
    private readonly ensure: () => Promise<void> = () => Promise.resolve(),
  ) {
    this.text = `SELECT nextval('${sequence.replaceAll("'", "''")}') AS v FROM generate_series(1, ${size})`;
  }

  /** `frame`: the caller's unit; once it holds a connection, the block is taken on it, never on a second one it would wait for. */
  async take(frame?: Frame): Promise<number> {
    for (;;) {
      const value = this.values.shift();
      if (value !== undefined) return value;
      const held = frame?.held;
      // A unit holding a connection must not wait for another from the pool (all of them may be held by such units).
      if (held) await this.refill(held);
      else {
        this.refilling ??= this.db.pooled((s) => this.refill(s)).finally(() => (this.refilling = undefined));
        await this.refilling;
      }
    }
  }

  private async refill(session: Session): Promise<void> {
    await this.ensure();
    const { rows } = await session.query<{ v: string }>(this.text, [], this.statement);
    if (rows.length === 0) throw new Error(`${this.statement}: the sequence gave no values`);
    this.values.push(...rows.map((row) => Number(row.v)).sort((a, b) => a - b));
  }
}
