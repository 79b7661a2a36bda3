/** An entry of the run queue: the real instant a job falls due, and the job. */
export interface Entry<J extends { seq: number }> {
  realDue: number;
  job: J;
}

const before = <J extends { seq: number }>(a: Entry<J>, b: Entry<J>): boolean =>
  a.realDue < b.realDue || (a.realDue === b.realDue && a.job.seq < b.job.seq);

/**
 * A binary min-heap by (realDue, seq): O(log n) to add and to take the earliest, where a
 * sorted array costs O(n) per insert and per shift once thousands of jobs are pending.
 */
export class JobHeap<J extends { seq: number }> {
  private items: Entry<J>[] = [];

  get size(): number {
    return this.items.length;
  }

  peek(): Entry<J> | undefined {
    return this.items[0];
  }

  push(entry: Entry<J>): void {
    const items = this.items;
    items.push(entry);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(items[i]!, items[parent]!)) break;
      [items[i], items[parent]] = [items[parent]!, items[i]!];
      i = parent;
    }
  }

  pop(): Entry<J> | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (top === undefined || last === undefined || items.length === 0) return top;
    items[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < items.length && before(items[l]!, items[m]!)) m = l;
      if (r < items.length && before(items[r]!, items[m]!)) m = r;
      if (m === i) break;
      [items[i], items[m]] = [items[m]!, items[i]!];
      i = m;
    }
    return top;
  }

  /** Re-keys every entry (after a clock moved) and drops the ones `keep` refuses; O(n log n). */
  rebuild(rekey: (entry: Entry<J>) => Entry<J>, keep: (entry: Entry<J>) => boolean): void {
    const entries = this.items.filter(keep).map(rekey);
    this.items = [];
    for (const entry of entries) this.push(entry);
  }
}
