import { compileGlob, globMatches, globProblem, type Glob } from '../faults/glob.js';

/** The most patterns one `--events` filter may hold. */
export const MAX_EVENT_PATTERNS = 16;

/** Which events a listener takes: a comma-separated list of patterns (`*` any characters), or every event. */
export class EventFilter {
  private constructor(
    private readonly globs: Glob[],
    readonly text: string,
  ) {}

  static readonly ALL = new EventFilter([], '*');

  /** Parses `cashin.*,cashout.success`; throws a message naming what is wrong. */
  static parse(text: string | null | undefined): EventFilter {
    const patterns = (text ?? '').split(',').map((p) => p.trim()).filter((p) => p !== '');
    if (patterns.length === 0 || patterns.includes('*')) return EventFilter.ALL;
    if (patterns.length > MAX_EVENT_PATTERNS) throw new Error(`events: at most ${MAX_EVENT_PATTERNS} patterns`);
    for (const p of patterns) {
      const problem = globProblem(p);
      if (problem) throw new Error(`events: pattern ${p} ${problem}`);
    }
    return new EventFilter(patterns.map(compileGlob), patterns.join(','));
  }

  /**
   * A filter as another instance recorded it (its `text`). One that does not parse (it always
   * does: it was parsed before it was recorded) takes every event, so that no listener is missed.
   */
  static recorded(text: string): EventFilter {
    try {
      return EventFilter.parse(text);
    } catch {
      return EventFilter.ALL;
    }
  }

  matches(event: string): boolean {
    return this.globs.length === 0 || this.globs.some((g) => globMatches(g, event));
  }
}
