import { mkdtemp, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { packagePath } from '../package-paths.js';

/**
 * The pacts shipped with the package (`pacts/` beside `dist/`), found from this module's own
 * location so that they are found from a clone (src/ or dist/) and from an npm install alike.
 */
export const SHIPPED_PACTS_DIR = packagePath('pacts/');

/** One interaction of a pact file, as much as the verifier's report needs. */
export interface PactInteraction {
  description: string;
  /** `Synchronous/HTTP`, `Asynchronous/Messages`, `Synchronous/Messages` (V4), or the V2/V3 equivalent. */
  kind: 'http' | 'message';
  states: { name: string; params: Record<string, unknown> }[];
}

export interface PactFile {
  file: string;
  consumer: string;
  provider: string;
  specification: string;
  interactions: PactInteraction[];
}

export class PactFileError extends Error {}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);
const nameOf = (value: unknown): string => (isObject(value) && typeof value.name === 'string' ? value.name : '?');

function statesOf(interaction: Json): PactInteraction['states'] {
  // V3/V4: providerStates [{name, params}]; V2: providerState "name".
  if (Array.isArray(interaction.providerStates)) {
    return interaction.providerStates.filter(isObject).map((s) => ({ name: String(s.name ?? ''), params: isObject(s.params) ? s.params : {} }));
  }
  if (typeof interaction.providerState === 'string') return [{ name: interaction.providerState, params: {} }];
  return [];
}

/** V4 marks every interaction with its type; V2/V3 keep HTTP in `interactions` and messages in `messages`. */
function isMessage(interaction: Json, inMessages: boolean): boolean {
  return inMessages || (typeof interaction.type === 'string' && interaction.type.includes('Messages'));
}

function parsePact(file: string, text: string): PactFile {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    throw new PactFileError(`${file}: not JSON (${(error as Error).message})`);
  }
  if (!isObject(doc) || !isObject(doc.consumer) || !isObject(doc.provider)) throw new PactFileError(`${file}: not a pact file (no consumer and provider)`);
  const interactions: PactInteraction[] = [];
  for (const [list, inMessages] of [
    [doc.interactions, false],
    [doc.messages, true],
  ] as const) {
    if (!Array.isArray(list)) continue;
    for (const item of list.filter(isObject)) {
      interactions.push({ description: String(item.description ?? ''), kind: isMessage(item, inMessages) ? 'message' : 'http', states: statesOf(item) });
    }
  }
  const metadata = isObject(doc.metadata) ? doc.metadata : {};
  const spec = isObject(metadata.pactSpecification) ? metadata.pactSpecification.version : isObject(metadata['pact-specification']) ? metadata['pact-specification'].version : undefined;
  return { file, consumer: nameOf(doc.consumer), provider: nameOf(doc.provider), specification: typeof spec === 'string' ? spec : '?', interactions };
}

/** The pact files named by `paths`: files as given, directories by their `*.json` (sorted). */
export async function loadPactFiles(paths: string[]): Promise<PactFile[]> {
  const files: string[] = [];
  for (const path of paths) {
    const full = resolve(path);
    let info;
    try {
      info = await stat(full);
    } catch {
      throw new PactFileError(`${path}: no such file or directory`);
    }
    if (info.isDirectory()) {
      const names = (await readdir(full)).filter((n) => n.endsWith('.json')).sort();
      files.push(...names.map((n) => join(full, n)));
    } else files.push(full);
  }
  if (files.length === 0) throw new PactFileError(`no pact files (*.json) in ${paths.join(', ')}`);
  return Promise.all(files.map(async (file) => parsePact(file, await readFile(file, 'utf8'))));
}

/**
 * Copies of the pact files without their message interactions, for an implementation that
 * can only be reached over HTTP. Files left with no interaction are dropped.
 */
export async function withoutMessages(pacts: PactFile[]): Promise<{ files: string[]; dir: string | undefined }> {
  let dir: string | undefined;
  const files: string[] = [];
  for (const pact of pacts) {
    if (!pact.interactions.some((i) => i.kind === 'message')) {
      files.push(pact.file);
      continue;
    }
    if (!pact.interactions.some((i) => i.kind === 'http')) continue;
    const doc = JSON.parse(await readFile(pact.file, 'utf8')) as Json;
    delete doc.messages;
    if (Array.isArray(doc.interactions)) doc.interactions = doc.interactions.filter((i) => !(isObject(i) && isMessage(i, false)));
    dir ??= await mkdtemp(join(tmpdir(), 'payments-sandbox-pacts-'));
    const copy = join(dir, basename(pact.file));
    await writeFile(copy, JSON.stringify(doc));
    files.push(copy);
  }
  return { files, dir };
}
