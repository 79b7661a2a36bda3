import pg from 'pg';

/** A statement of a pipeline: its text (the same text, the same prepared statement) and its parameters. */
export interface Piped {
  text: string;
  values?: readonly unknown[];
}

/** The parts of pg-protocol's messages a submittable is handed that are read here. */
interface RowDescription {
  fields: readonly { name: string; dataTypeID: number }[];
}
interface DataRow {
  fields: readonly (string | null)[];
}
interface CommandComplete {
  text: string;
}

/** Distinct statement texts given a name (prepared once per connection); past it, a text is parsed each time. */
const MAX_NAMED = 1_000;
const names = new Map<string, string>();
/** Which of them each connection has parsed: a connection's prepared statements live as long as it does. */
const parsedOn = new WeakMap<pg.Connection, Set<string>>();

function nameOf(text: string): string {
  let name = names.get(text);
  if (name === undefined && names.size < MAX_NAMED) {
    name = `unit_${names.size + 1}`;
    names.set(text, name);
  }
  return name ?? '';
}

/** A parameter in PostgreSQL's text form, as pg's own Query would send it. */
export function parameter(value: unknown): string | Buffer | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string' || Buffer.isBuffer(value)) return value;
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) {
    const items = value.map((item: unknown) => (item === null || item === undefined ? 'NULL' : `"${String(item).replace(/[\\"]/g, (c) => `\\${c}`)}"`));
    return `{${items.join(',')}}`;
  }
  return JSON.stringify(value);
}

function commandOf(message: CommandComplete): { command: string; rowCount: number | null } {
  const words = message.text.split(' ');
  const count = Number(words.at(-1));
  return { command: words[0] ?? '', rowCount: words.length > 1 && Number.isInteger(count) ? count : null };
}

/**
 * Statements sent in one message with the extended protocol, each a prepared statement (parsed
 * on the connection at its first use there), and one Sync: one round trip, and PostgreSQL plans
 * none of them again. Outside a transaction block they run as one implicit transaction, which
 * Sync commits (or rolls back, after a failure: the statements after it are skipped).
 *
 * A `pg` submittable (its public extension point, as pg-cursor's): the client hands it the
 * connection to write to and the messages of the answer. After a failure of a message that
 * parsed statements, which of them exist is unknown: `spoiled`, and the caller must not reuse
 * the connection. Once every statement is prepared there (after a connection's first units),
 * a failure leaves it usable.
 */
export class Pipeline implements pg.Submittable {
  readonly done: Promise<pg.QueryResult[]>;
  private resolve!: (results: pg.QueryResult[]) => void;
  private reject!: (err: unknown) => void;
  private readonly results: pg.QueryResult[] = [];
  private fields: RowDescription['fields'] = [];
  private parsers: ((text: string) => unknown)[] = [];
  private rows: Record<string, unknown>[] = [];
  private failed = false;
  /** Names this message parses, and the connection's set they were added to. */
  private readonly parsedHere: string[] = [];
  private parsed: Set<string> | undefined;

  constructor(private readonly statements: readonly Piped[]) {
    this.done = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  /**
   * Writes the message. An Error returned (a value with no text form) is pg's way of refusing
   * a query before anything is written: it reports it and the connection stays usable.
   */
  submit(connection: pg.Connection): Error | undefined {
    let parsed = parsedOn.get(connection);
    if (parsed === undefined) {
      parsed = new Set();
      parsedOn.set(connection, parsed);
    }
    let bound: { name: string; text: string; values: (string | Buffer | null)[] }[];
    try {
      bound = this.statements.map(({ text, values }) => ({ name: nameOf(text), text, values: (values ?? []).map(parameter) }));
    } catch (err) {
      return err instanceof Error ? err : new Error(String(err));
    }
    const stream = connection.stream;
    stream.cork();
    try {
      for (const { name, text, values } of bound) {
        if (name === '' || !parsed.has(name)) {
          connection.parse({ name, text, types: [] }, true);
          if (name !== '') {
            parsed.add(name);
            this.parsedHere.push(name);
          }
        }
        connection.bind({ statement: name, values }, true);
        connection.describe({ type: 'P', name: '' }, true);
        connection.execute({ portal: '' }, true);
      }
      connection.sync();
    } finally {
      stream.uncork();
    }
    this.parsed = parsed;
    return undefined;
  }

  /**
   * Whether the connection's prepared statements are no longer known: a statement this message
   * parsed may or may not exist after a failure (the failing one's Parse, those skipped after
   * it). When every statement was parsed before, a failure changes none of them.
   */
  get spoiled(): boolean {
    return this.failed && this.parsedHere.length > 0;
  }

  handleRowDescription(message: RowDescription): void {
    this.fields = message.fields;
    this.parsers = message.fields.map((field) => {
      const parse: unknown = pg.types.getTypeParser(field.dataTypeID, 'text');
      return typeof parse === 'function' ? (text: string) => (parse as (text: string) => unknown)(text) : (text: string) => text;
    });
    this.rows = [];
  }

  handleDataRow(message: DataRow): void {
    const row: Record<string, unknown> = {};
    message.fields.forEach((value, i) => {
      const field = this.fields[i];
      if (field !== undefined) row[field.name] = value === null ? null : (this.parsers[i]?.(value) ?? value);
    });
    this.rows.push(row);
  }

  handleCommandComplete(message: CommandComplete): void {
    const { command, rowCount } = commandOf(message);
    this.results.push({ command, rowCount, oid: 0, fields: this.fields.map((f) => ({ ...f, tableID: 0, columnID: 0, dataTypeSize: 0, dataTypeModifier: 0, format: 'text' })), rows: this.rows });
    this.fields = [];
    this.parsers = [];
    this.rows = [];
  }

  handleEmptyQuery(): void {
    this.results.push({ command: '', rowCount: null, oid: 0, fields: [], rows: [] });
  }

  handlePortalSuspended(): void {
    // Never: every Execute asks for all rows.
  }

  handleError(err: unknown): void {
    if (this.failed) return;
    this.failed = true;
    for (const name of this.parsedHere) this.parsed?.delete(name);
    this.reject(err);
  }

  handleReadyForQuery(): void {
    if (!this.failed) this.resolve(this.results);
  }
}
