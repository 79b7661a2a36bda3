import { createHash } from 'node:crypto';
import type pg from 'pg';

/** A statement as sent: its text and its parameters (`$1`…), bound by pg. */
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
const prepared = new PreparedNames(1_000);

/**
 * pg's query config for a statement of a unit: one with parameters as a prepared statement of
 * its own name; one without (BEGIN, COMMIT, SAVEPOINT…) as a plain query.
 */
export function queryConfig(statement: Statement): pg.QueryConfig {
  const values = statement.values === undefined ? [] : [...statement.values];
  if (values.length === 0) return { text: statement.text };
  const name = prepared.of(statement.text);
  return name === undefined ? { text: statement.text, values } : { name, text: statement.text, values };
}
