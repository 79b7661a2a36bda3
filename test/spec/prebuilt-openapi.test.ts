import SwaggerParser from '@apidevtools/swagger-parser';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync, appendFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deserialize, serialize } from 'node:v8';
import { afterAll, describe, expect, it } from 'vitest';
import { prebuildSpec, PREBUILT_SPEC } from '../../scripts/prebuild-spec.mjs';
import { OPENAPI_PATH, loadOpenApi } from '../../src/spec/openapi.js';

/** A package root of its own: openapi.yaml and the dist/ the build writes the copy into. */
const root = mkdtempSync(join(tmpdir(), 'prebuilt-spec-'));
mkdirSync(join(root, 'dist'));
const source = join(root, 'openapi.yaml');
const copy = join(root, PREBUILT_SPEC);
copyFileSync(OPENAPI_PATH, source);
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("the build's copy of openapi.yaml (scripts/prebuild-spec.mjs)", () => {
  it('is the document a start would otherwise validate and dereference, and is made again only when the spec changed', async () => {
    expect(await prebuildSpec(root)).toBe(true);
    expect(await prebuildSpec(root)).toBe(false);
    const fresh = await SwaggerParser.validate(source);
    expect(deserialize(readFileSync(copy)).document).toEqual(fresh);
    const loaded = await loadOpenApi(source, copy);
    expect(loaded).toEqual(fresh);
    // And shaped as swagger-parser's: where the spec shares a $ref, the objects are shared, not copied.
    const shared = (document: typeof loaded): boolean => {
      const created = document.paths?.['/transactions/v2/purchase']?.post?.responses?.['201'];
      const schema = created && 'content' in created ? created.content?.['application/json']?.schema : undefined;
      return schema !== undefined && schema === document.components?.schemas?.Transaction;
    };
    expect(shared(fresh as typeof loaded)).toBe(true);
    expect(shared(loaded)).toBe(true);
  });

  it('is read only while it was made from this openapi.yaml: an edited spec is validated afresh', async () => {
    await prebuildSpec(root);
    // The copy, marked: a start that read it would see the mark.
    const marked = deserialize(readFileSync(copy)) as { document: { info: { title: string } } };
    marked.document.info.title = 'from the copy';
    writeFileSync(copy, serialize(marked));
    expect((await loadOpenApi(source, copy)).info.title).toBe('from the copy');
    appendFileSync(source, '\n# edited after the build\n');
    expect((await loadOpenApi(source, copy)).info.title).not.toBe('from the copy');
    // And the next build makes it again.
    expect(await prebuildSpec(root)).toBe(true);
    expect((await loadOpenApi(source, copy)).info.title).not.toBe('from the copy');
  });

  it('cut short or missing, is not read: the spec is validated afresh', async () => {
    await prebuildSpec(root);
    const whole = readFileSync(copy);
    writeFileSync(copy, whole.subarray(0, Math.floor(whole.length / 2)));
    expect((await loadOpenApi(source, copy)).openapi).toMatch(/^3\.1\./);
    rmSync(copy);
    expect((await loadOpenApi(source, copy)).openapi).toMatch(/^3\.1\./);
    expect(await prebuildSpec(root)).toBe(true);
  });
});
