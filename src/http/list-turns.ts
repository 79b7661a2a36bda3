import { NEVER_ACCEPTING } from './accepts.js';
import type { SandboxOperation } from './match.js';

/** List operations let through per turn of the event loop; the others wait for the next turns, in order. */
export const LISTS_PER_TURN = 4;
/**
 * While connections are being accepted (a turn after one that accepted one), one list at most
 * per this many milliseconds: the pages keep moving, and the turns stay short enough for the
 * accept queue to drain (accepts.ts).
 */
export const LIST_GAP_WHILE_ACCEPTING_MS = 20;

/**
 * A few list requests per turn of the event loop, the rest in the turns after, in the order they
 * came. A list's handler reads and presents a whole page (100 products of ~36 KB: a few ms)
 * before its answer is streamed; 250 clients asking for pages at once ran 250 of them in the
 * one turn that read their requests, and a health check that came in behind them waited ~2 s
 * to be accepted. Everything else (health, a transaction by id, a purchase) is never held here.
 */
export class ListTurns {
  private waiting: (() => void)[] = [];
  private scheduled = false;
  private lastReleaseMs = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly perTurn: number = LISTS_PER_TURN,
    /** Whether the server accepted a connection since the last turn (src/http/accepts.ts). */
    private readonly accepting: () => boolean = NEVER_ACCEPTING,
    private readonly nowMs: () => number = () => performance.now(),
  ) {}

  /** Resolves in a turn of its own, after the turn's I/O. */
  enter(): Promise<void> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.release);
      }
    });
  }

  private readonly release = (): void => {
    const now = this.nowMs();
    const count = !this.accepting() ? this.perTurn : now - this.lastReleaseMs >= LIST_GAP_WHILE_ACCEPTING_MS ? 1 : 0;
    if (count > 0) this.lastReleaseMs = now;
    for (const resolve of this.waiting.splice(0, count)) resolve();
    this.scheduled = this.waiting.length > 0;
    if (this.scheduled) setImmediate(this.release);
  };
}

/** The operations whose answer is a page (a `data` array in their 200's JSON schema). */
export function listOperations(operations: readonly SandboxOperation[]): ReadonlySet<SandboxOperation> {
  return new Set(operations.filter((operation) => answersAPage(operation.responses?.['200'])));
}

function answersAPage(response: unknown): boolean {
  const schema = at(at(at(response, 'content'), 'application/json'), 'schema');
  return at(at(at(schema, 'properties'), 'data'), 'type') === 'array';
}

function at(value: unknown, key: string): unknown {
  if (typeof value !== 'object' || value === null) return undefined;
  const found: unknown = Reflect.get(value, key);
  return found;
}
