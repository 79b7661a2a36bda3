import { dirname, join } from 'node:path';
import { EmbeddedRepository } from './embedded/repository.js';
import { FileObjectStore, MemoryObjectStore } from './embedded/objects.js';
import type { LogLimits, OpenedStore, SharedLog } from './ports.js';
import type { Logger } from './types.js';

/** Which store: the embedded journaled one (the default), or PostgreSQL shared by many instances. */
export type StoreChoice = { kind: 'embedded' } | { kind: 'postgres'; url: string };

export interface OpenStoreOptions {
  store: StoreChoice;
  /** The embedded store's data file, its images in `objects/` beside it; undefined: everything in memory. */
  dataFile: string | undefined;
  /** Journal size that triggers folding it into the snapshot (embedded). */
  compactMinBytes?: number;
  /** Real time in ms since the epoch. */
  now: () => number;
  logger?: Logger;
  /**
   * Brings a data file an earlier version wrote to this one's layout, before anything reads it.
   * Only a data file can have been written by an earlier layout: PostgreSQL's tables are made by
   * this one, so the hook is not called there.
   */
  upgrade?: (repository: EmbeddedRepository) => Promise<void>;
}

/** Opens the store a configuration chooses, with its objects and its request log: the one place that knows the kinds apart. */
export function openStore(options: OpenStoreOptions): Promise<OpenedStore> {
  return options.store.kind === 'postgres' ? openPostgres(options.store.url, options) : openEmbedded(options);
}

async function openEmbedded(options: OpenStoreOptions): Promise<OpenedStore> {
  const { dataFile } = options;
  const repository = await EmbeddedRepository.open({ file: dataFile, now: options.now, compactMinBytes: options.compactMinBytes, logger: options.logger });
  // Releases the data file's lock without compacting it, so a corrected start can be tried again in this process.
  const abandon = (): Promise<void> => repository.store.close({ snapshot: false }).catch(() => undefined);
  try {
    await options.upgrade?.(repository);
  } catch (error) {
    await abandon();
    throw error;
  }
  return {
    repository,
    objects: dataFile === undefined ? new MemoryObjectStore() : new FileObjectStore(join(dirname(dataFile), 'objects')),
    shared: false,
    // In memory only, per instance: a request is not a journal write.
    requestLog: () => undefined,
    close: () => repository.close(),
    abandon,
  };
}

async function openPostgres(url: string, options: OpenStoreOptions): Promise<OpenedStore> {
  // The driver and the PostgreSQL store are loaded only by a sandbox that uses them.
  const { PostgresRepository } = await import('./postgres/repository.js');
  const repository = await PostgresRepository.open({ connectionString: url, now: options.now, logger: options.logger });
  const flushes: (() => Promise<void>)[] = [];
  return {
    repository,
    objects: repository.objects,
    shared: true,
    buckets: repository.buckets,
    requestLog: <E>(limits: LogLimits): SharedLog<E> => {
      const log = repository.requestLog<E>(limits);
      flushes.push(() => log.flush());
      return log;
    },
    close: async () => {
      // The last requests' entries are written before the connections close.
      await Promise.all(flushes.map((flush) => flush()));
      await repository.close();
    },
    abandon: () => repository.close().catch(() => undefined),
  };
}
