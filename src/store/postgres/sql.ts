import { createHash } from 'node:crypto';
import pg from 'pg';

/** A statement: its text and its parameters (`$1`…). */
export interface Statement {
  text: string;
  values?: readonly unknown[];
}

/** A prepared statement's name: PostgreSQL cuts names at 63 bytes, so a longer one is shortened by a hash of it. */
export function statementName(name: string): string {
  return name.length <= 63 ? name : `${name.slice(0, 40)}_${createHash('sha1').update(name).digest('hex').slice(0, 16)}`;
}

/**
 * Names for the texts of units' statements: a unit's writes are few texts sent very often, each
 * prepared once per connection (pg keeps track of which) under the name given here. Past `max`
 * texts (one built from an unforeseen shape), a text gets none and is parsed each time rather
 * than growing the server's prepared statements without end.
 */
export class PreparedNames {
  private readonly names = new Map<string, string>();

  constructor(private readonly max: number) {}

  /** The name for `text`, the same each time; undefined past the bound. */
  of(text: string): string | undefined {
    let name = this.names.get(text);
    if (name === undefined && this.names.size < this.max) {
      name = `unit_${this.names.size + 1}`;
      this.names.set(text, name);
    }
    return name;
  }
}

/** The process's: a name stands for one text on every connection. */
const names = new PreparedNames(1_000);

/**
 * A parameter's text form, as PostgreSQL reads a text parameter of the type its statement gives
 * it: what the store's statements pass (text, numbers, booleans, JSON values, text arrays, dates).
 */
export function textOf(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  if (value instanceof Date) return value.toISOString();
  if (Buffer.isBuffer(value)) return `\\x${value.toString('hex')}`;
  if (Array.isArray(value)) return `{${value.map((item: unknown) => (item === null || item === undefined ? 'NULL' : `"${String(item).replace(/[\\"]/g, (c) => `\\${c}`)}"`)).join(',')}}`;
  return JSON.stringify(value);
}

/**
 * A parameter as a literal of a statement's text, typed by PostgreSQL from where it stands.
 * Text with a quote or a backslash is escaped by pg's escapeLiteral; text with neither needs
 * only its quotes, and most of what a unit writes is kilobytes of JSON with neither, which
 * escapeLiteral would walk a character at a time (docs/benchmarks.md).
 */
export function literal(value: unknown): string {
  const text = textOf(value);
  if (text === null) return 'NULL';
  return text.includes("'") || text.includes('\\') ? pg.escapeLiteral(text) : `'${text}'`;
}

/** Statements as one simple query, and what must be prepared on the connection before it. */
export interface Script {
  /** `PREPARE`s of the texts the connection does not have yet, to send (and see succeed) first. */
  prepare: string[];
  /** Their names, which the connection has once they have run. */
  prepares: string[];
  /** The statements, one part each (three for a text past the bound of names). */
  parts: string[];
  /** For each statement, the index of its result among the parts'. */
  answers: number[];
  /**
   * Whether the parts prepare a statement for one use: after their failure, it may be left on
   * the connection (those before the failure ran).
   */
  transient: boolean;
}

/**
 * Statements as one simple query (one message, one round trip, one Sync): one with parameters
 * as `EXECUTE name(literals…)` of a statement prepared on the connection (PostgreSQL plans it
 * once per connection, as for a bound prepared statement); one without, as it is. `prepared`:
 * the names the connection has.
 */
export function script(statements: readonly Statement[], prepared: ReadonlySet<string>): Script {
  const prepare: string[] = [];
  const prepares: string[] = [];
  const parts: string[] = [];
  const answers: number[] = [];
  let transient = false;
  for (const { text, values } of statements) {
    if (values === undefined || values.length === 0) {
      answers.push(parts.push(text) - 1);
      continue;
    }
    const name = names.of(text);
    const args = values.map(literal).join(', ');
    if (name === undefined) {
      // Past the bound of names, a text is prepared for this one use.
      transient = true;
      parts.push(`PREPARE unit_once AS ${text}`);
      answers.push(parts.push(`EXECUTE unit_once(${args})`) - 1);
      parts.push('DEALLOCATE unit_once');
      continue;
    }
    if (!prepared.has(name) && !prepares.includes(name)) {
      prepare.push(`PREPARE ${name} AS ${text}`);
      prepares.push(name);
    }
    answers.push(parts.push(`EXECUTE ${name}(${args})`) - 1);
  }
  return { prepare, prepares, parts, answers, transient };
}
