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
 * connection to write to and the messages of the answer. After a failure the statements it
 * parsed are unknown, so the caller must not reuse the connection (the promise rejects with
 * `connectionSpoiled`).
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

  constructor(private readonly statements: readonly Piped[]) {
    this.done = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  submit(connection: pg.Connection): void {
    let parsed = parsedOn.get(connection);
    if (parsed === undefined) {
      parsed = new Set();
      parsedOn.set(connection, parsed);
    }
    const stream = connection.stream;
    stream.cork();
    try {
      for (const { text, values } of this.statements) {
        const name = nameOf(text);
        if (name === '' || !parsed.has(name)) {
          connection.parse({ name, text, types: [] }, true);
          if (name !== '') parsed.add(name);
        }
        connection.bind({ statement: name, values: (values ?? []).map(parameter) }, true);
        connection.describe({ type: 'P', name: '' }, true);
        connection.execute({ portal: '' }, true);
      }
      connection.sync();
    } finally {
      stream.uncork();
    }
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
    this.reject(err);
  }

  handleReadyForQuery(): void {
    if (!this.failed) this.resolve(this.results);
  }
}
