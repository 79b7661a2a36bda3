import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { EmbeddedRepository } from '../../../src/store/embedded/repository.js';
import { describeRepositoryConformance } from '../ports-conformance.js';

/** The ports' conformance cases on the embedded store: in memory, and journaled to a data file (each test a file of its own). */
const dir = mkdtempSync(join(tmpdir(), 'embedded-conformance-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

describeRepositoryConformance('embedded, in memory', ({ now }) => EmbeddedRepository.open({ now }));
describeRepositoryConformance('embedded, journaled', ({ now }) => EmbeddedRepository.open({ file: join(dir, `data-${++files}.json`), now }));
