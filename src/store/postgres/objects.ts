import type { ObjectStore, StoredObject } from '../ports.js';
import type { Db } from './db.js';

/**
 * Object bytes (product images) in the `objects` table, so that every instance serves every
 * image. A put is its own statement, committed before it returns (the image is durable before
 * the product points at it), whether or not a unit of work is running.
 */
export class PgObjectStore implements ObjectStore {
  constructor(private readonly db: Db) {}

  put(accountId: string, key: string, object: StoredObject): Promise<void> {
    return this.db.session(async (s) => {
      await s.query(
        `INSERT INTO objects (account_id, key, content_type, bytes) VALUES ($1, $2, $3, $4)
         ON CONFLICT (account_id, key) DO UPDATE SET content_type = EXCLUDED.content_type, bytes = EXCLUDED.bytes`,
        [accountId, key, object.contentType, object.bytes],
      );
    });
  }

  /** By key alone: the object's URL is public and names no account (keys are random). */
  get(key: string): Promise<StoredObject | undefined> {
    return this.db.session(async (s) => {
      const { rows } = await s.query<{ bytes: Buffer; content_type: string }>('SELECT bytes, content_type FROM objects WHERE key = $1', [key]);
      const row = rows[0];
      return row === undefined ? undefined : { bytes: row.bytes, contentType: row.content_type };
    });
  }

  delete(accountId: string, key: string): Promise<void> {
    return this.db.session(async (s) => {
      await s.query('DELETE FROM objects WHERE account_id = $1 AND key = $2', [accountId, key]);
    });
  }
}
