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
 * Distinct texts of units' statements given a name: a unit's writes are few texts sent very
 * often, each prepared once per connection (pg keeps track of which). Past the bound, a text
 * (one built from an unforeseen shape) is parsed each time rather than growing the server's
 * prepared statements without end.
 */
const MAX_NAMED = 1_000;
const names = new Map<string, string>();

/** The prepared statement name for `text`, or undefined past the bound. */
export function preparedName(text: string): string | undefined {
  let name = names.get(text);
  if (name === undefined && names.size < MAX_NAMED) {
    name = `unit_${names.size + 1}`;
    names.set(text, name);
  }
  return name;
}

/**
 * pg's query config for a statement of a unit: one with parameters as a prepared statement of
 * its own name; one without (BEGIN, COMMIT, SAVEPOINT…) as a plain query.
 */
export function queryConfig(statement: Statement): pg.QueryConfig {
  const values = statement.values === undefined ? [] : [...statement.values];
  if (values.length === 0) return { text: statement.text };
  const name = preparedName(statement.text);
  return name === undefined ? { text: statement.text, values } : { name, text: statement.text, values };
}
