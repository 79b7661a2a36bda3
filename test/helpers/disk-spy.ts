import { vi } from 'vitest';
import { decodeLine } from '../../src/store/codec.js';
import { Journal, nodeJournalFs, type JournalFile, type JournalFs } from '../../src/store/journal.js';
import { Dispatcher } from '../../src/webhooks/dispatcher.js';

/**
 * One observed step, in the order it happened in this process: a change handed to the
 * journal, bytes written to a segment, a datasync that completed, an HTTP answer the test
 * received, a webhook request handed to the dispatcher.
 */
export type Step =
  | { kind: 'append'; line: string }
  | { kind: 'write'; text: string }
  | { kind: 'synced' }
  | { kind: 'reply'; what: string }
  | { kind: 'send'; headers: Record<string, string> };

export type StoredRecord = { id: string } & Record<string, unknown>;
/** collection → id → record, as a restart would load it. */
export type DiskState = Map<string, Map<string, StoredRecord>>;

export interface DiskSpy {
  steps: Step[];
  /** Records that the test received an answer, at this point in the order. */
  reply(what: string): void;
  /** Every journal write from now on fails with ENOSPC, as on a full disk. */
  fillDisk(): void;
  /** What was durably on disk when `steps[index]` happened: what the last completed datasync before it covered. */
  durableAt(index: number): DiskState;
  /** Undoes the spies (journals already opened keep the observed file system). */
  restore(): void;
}

const enospc = (): Error => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });

/**
 * Observes every journal opened from now on through Journal's file-system seam, and every
 * append and webhook send through spies, in one ordered list of steps. Start the sandbox
 * under test after calling this.
 */
export function spyOnDisk(): DiskSpy {
  const steps: Step[] = [];
  let full = false;

  const fs: JournalFs = {
    async open(file, flags) {
      const fh = await nodeJournalFs.open(file, flags);
      const write = async (buffer: Buffer, offset: number, length: number, position: number | null) => {
        if (full) throw enospc();
        steps.push({ kind: 'write', text: buffer.subarray(offset, offset + length).toString('utf8') });
        return fh.write(buffer, offset, length, position);
      };
      const observed: JournalFile = {
        write: write as unknown as JournalFile['write'],
        datasync: async () => {
          await fh.datasync();
          steps.push({ kind: 'synced' });
        },
        close: () => fh.close(),
        stat: ((...args: Parameters<JournalFile['stat']>) => fh.stat(...args)) as JournalFile['stat'],
      };
      return observed;
    },
  };

  const realOpen = Journal.open.bind(Journal);
  vi.spyOn(Journal, 'open').mockImplementation((file, seq, onFlushed) => realOpen(file, seq, onFlushed, fs));
  // Every change reaches the journal through appendUnit (append is a unit of one).
  const realAppendUnit = Journal.prototype.appendUnit;
  vi.spyOn(Journal.prototype, 'appendUnit').mockImplementation(function (this: Journal, lines: readonly string[]) {
    for (const line of lines) steps.push({ kind: 'append', line });
    realAppendUnit.call(this, lines);
  });
  const realPost = Dispatcher.prototype.post;
  vi.spyOn(Dispatcher.prototype, 'post').mockImplementation(function (this: Dispatcher, url, body, headers) {
    steps.push({ kind: 'send', headers });
    return realPost.call(this, url, body, headers);
  });

  return {
    steps,
    reply(what) {
      steps.push({ kind: 'reply', what });
    },
    fillDisk() {
      full = true;
    },
    durableAt(index) {
      let lastSync = -1;
      for (let i = 0; i < index; i++) if (steps[i]!.kind === 'synced') lastSync = i;
      const text = steps
        .slice(0, Math.max(lastSync, 0))
        .map((s) => (s.kind === 'write' ? s.text : ''))
        .join('');
      const state: DiskState = new Map();
      for (const line of text.split('\n')) {
        if (line === '' || isUnitHeader(line)) continue;
        const op = decodeLine(Buffer.from(line, 'utf8'));
        if (op === undefined) throw new Error(`the journal holds a line that does not decode: ${line}`);
        let records = state.get(op.collection);
        if (!records) state.set(op.collection, (records = new Map()));
        if (op.value === null) records.delete(op.id);
        else records.set(op.id, op.value as StoredRecord);
      }
      return state;
    },
    restore() {
      vi.restoreAllMocks();
    },
  };
}

/** A journal line that opens a unit of work (`<crc>\t{"unit":N}`): it frames changes, it is not one. */
export function isUnitHeader(line: string): boolean {
  return line.slice(line.indexOf('\t') + 1).startsWith('{"unit":');
}

/** The index of the first step satisfying `match`, failing when there is none. */
export function indexOf(steps: Step[], what: string, match: (step: Step) => boolean): number {
  const index = steps.findIndex(match);
  if (index === -1) throw new Error(`no step: ${what}; steps were ${steps.map((s) => s.kind).join(', ')}`);
  return index;
}
