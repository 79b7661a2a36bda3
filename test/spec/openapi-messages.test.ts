import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { OPENAPI_PATH } from '../../src/spec/openapi.js';

describe('openapi.yaml x-message texts', () => {
  // In a YAML flow mapping an unquoted comma ends the value: "must be one of A, B" would
  // silently become "must be one of A" plus stray keys.
  it('quotes every x-message with a comma inside a flow mapping', () => {
    const offending = readFileSync(OPENAPI_PATH, 'utf8')
      .split('\n')
      .map((line, i) => ({ line, n: i + 1 }))
      .filter(({ line }) => /\{.*x-message: [^'"][^}]*,.*\}/.test(line));
    expect(offending).toEqual([]);
  });
});
