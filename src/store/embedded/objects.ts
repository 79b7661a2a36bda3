import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { ObjectStore, StoredObject } from '../ports.js';

const CONTENT_TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
};

const contentTypeOfKey = (key: string): string =>
  CONTENT_TYPES[key.slice(key.lastIndexOf('.') + 1)] ?? 'application/octet-stream';

/**
 * Files under `<data dir>/objects`, written durably (tmp, fsync, rename) before a 2xx. One
 * directory for every account, as earlier versions wrote it: keys are random, so they never clash.
 */
export class FileObjectStore implements ObjectStore {
  constructor(private readonly dir: string) {}

  async put(_accountId: string, key: string, object: StoredObject): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const tmp = join(this.dir, `.${key}.tmp`);
    const file = await open(tmp, 'w');
    try {
      await file.writeFile(object.bytes);
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(tmp, join(this.dir, key));
  }

  async get(key: string): Promise<StoredObject | undefined> {
    try {
      return { bytes: await readFile(join(this.dir, key)), contentType: contentTypeOfKey(key) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  async delete(_accountId: string, key: string): Promise<void> {
    await rm(join(this.dir, key), { force: true });
  }
}

/** `--in-memory` keeps nothing on disk, images included. */
export class MemoryObjectStore implements ObjectStore {
  private readonly objects = new Map<string, StoredObject>();

  async put(_accountId: string, key: string, object: StoredObject): Promise<void> {
    this.objects.set(key, object);
  }

  async get(key: string): Promise<StoredObject | undefined> {
    return this.objects.get(key);
  }

  async delete(_accountId: string, key: string): Promise<void> {
    this.objects.delete(key);
  }
}
