import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { prebuildValidators, PREBUILT_VALIDATORS } from '../../scripts/prebuild-validators.mjs';
import { digestOf } from '../../src/http/prebuilt-validators.js';
import { OPENAPI_PATH } from '../../src/spec/openapi.js';
import { ROOT } from '../helpers/process.js';
import { startSandbox } from '../helpers/sandbox.js';

/** The build's validators (scripts/prebuild-validators.mjs) in the project's own dist/, as the suite's setup built it. */
describe("the build's compiled request validators", () => {
  it('are current after a build: made from this openapi.yaml, and not made again', async () => {
    expect(await prebuildValidators(ROOT)).toBe(false);
    const manifest: { sha256: string } = JSON.parse(readFileSync(join(ROOT, PREBUILT_VALIDATORS, 'manifest.json'), 'utf8'));
    expect(manifest.sha256).toBe(digestOf(OPENAPI_PATH));
  });

  it("are what a sandbox validates with: an operation's first request requires its file instead of compiling", async () => {
    const sandbox = await startSandbox();
    try {
      const created = await sandbox.client.post('/v2/products', { name: 'Prebuilt' });
      expect(created.status).toBe(201);
      const refused = await sandbox.client.post('/v2/products', { name: 42 });
      expect(refused.status).toBe(400);
      const loaded = Object.keys(createRequire(import.meta.url).cache).filter((file) => file.includes(`${PREBUILT_VALIDATORS}/createProduct.`));
      expect(loaded.map((file) => file.slice(file.lastIndexOf('/') + 1)).sort()).toEqual(expect.arrayContaining(['createProduct.every.0.cjs', 'createProduct.first.0.cjs']));
    } finally {
      await sandbox.stop();
    }
  });
});
