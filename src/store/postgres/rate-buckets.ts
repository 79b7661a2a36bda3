import type { Lease, SharedBuckets } from '../ports.js';
import type { Db } from './db.js';

/**
 * The rate limits' shared token buckets (migration 005): a lease is one prepared statement in
 * autocommit, the refill and the grant done under the row's lock on the database's clock.
 */
export class PgSharedBuckets implements SharedBuckets {
  constructor(private readonly db: Db) {}

  async lease(key: string, bucket: string, perSecond: number, burst: number, want: number): Promise<Lease> {
    const result = await this.db.pooled((s) =>
      s.query<{ granted: number; remaining: number; wait_ms: number }>(
        'SELECT granted, remaining, wait_ms FROM sandbox_rate_lease($1, $2, $3, $4, $5)',
        [key, bucket, perSecond, burst, want],
        'sandbox_rate_lease',
      ),
    );
    const row = result.rows[0];
    if (row === undefined) throw new Error('sandbox_rate_lease answered no row');
    return { granted: row.granted, remaining: row.remaining, waitMs: row.wait_ms };
  }
}
