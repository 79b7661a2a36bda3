import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerScenarioCommand } from '../../src/scenarios/cli.js';
import { formatScenarioResult } from '../../src/scenarios/report/format.js';
import { runScenario } from '../../src/scenarios/run.js';
import { ROOT } from '../helpers/process.js';
import { startSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { allFences } from '../helpers/samples.js';

/**
 * The scenario documentation (scenarios/README.md, the page `scenario --help` points at, and
 * docs/scenarios.md) cannot drift from the runner: every scenario it shows runs and passes, and
 * every option of the runner (the CLI's and runScenario's) is documented.
 */
const DOCUMENTS = ['scenarios/README.md', 'docs/scenarios.md'];

/** The ```yaml blocks that are scenarios (a `steps` list), of every document with samples. */
const scenarioBlocks = allFences()
  .filter((f) => f.lang === 'yaml')
  .flatMap((f) => {
    const value: unknown = parse(f.text);
    return value !== null && typeof value === 'object' && 'steps' in value ? [{ where: `${f.file}:${f.line}`, text: f.text, named: 'name' in value }] : [];
  });

let sb: TestSandbox;
let dir: string;
beforeAll(async () => {
  sb = await startSandbox({ instructionDelayMs: 100 });
  dir = mkdtempSync(join(tmpdir(), 'doc-scenarios-'));
});
afterAll(async () => {
  await sb?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('the scenarios the docs show', () => {
  it('are whole files (a name and steps), the complete example among them', () => {
    expect(scenarioBlocks.length).toBeGreaterThanOrEqual(3);
    expect(scenarioBlocks.filter((b) => !b.named).map((b) => b.where)).toEqual([]);
    expect(scenarioBlocks.map((b) => b.where)).toEqual(expect.arrayContaining([expect.stringMatching(/^scenarios\/README\.md:/)]));
  });

  it.each(scenarioBlocks.map((b) => [b.where, b.text] as const))('%s runs and passes', async (where, text) => {
    const file = join(dir, `${where.replace(/[/:.]/g, '-')}.yaml`);
    writeFileSync(file, text);
    const result = await runScenario(file, { baseUrl: sb.url });
    expect(result.ok, `${where}\n${formatScenarioResult(result)}`).toBe(true);
  });
});

describe('the runner options the docs list', () => {
  const texts = DOCUMENTS.map((file) => [file, readFileSync(join(ROOT, file), 'utf8')] as const);

  it("every option of scenario run, in each page's table", () => {
    const program = new Command('payments-sandbox');
    registerScenarioCommand(program);
    const run = program.commands.find((c) => c.name() === 'scenario')?.commands.find((c) => c.name() === 'run');
    const flags = (run?.options ?? []).map((o) => o.long ?? '');
    expect(flags).toEqual(expect.arrayContaining(['--base-url', '--webhooks', '--no-color']));
    for (const [file, text] of texts) {
      const rows = text.split('\n').filter((line) => line.startsWith('| `--'));
      expect(flags.filter((flag) => !rows.some((row) => row.startsWith(`| \`${flag}`))), `${file}: options of scenario run missing from its table`).toEqual([]);
    }
  });

  it("every field of RunOptions (src/scenarios/run.ts), in each page's Options: list", () => {
    const source = readFileSync(join(ROOT, 'src', 'scenarios', 'run.ts'), 'utf8');
    const body = /export interface RunOptions \{([\s\S]*?)\n\}/.exec(source)?.[1] ?? '';
    const fields = [...body.matchAll(/^ {2}(\w+)\??:/gm)].map((m) => m[1] ?? '');
    expect(fields).toEqual(expect.arrayContaining(['baseUrl', 'webhooks', 'onEvent']));
    for (const [file, text] of texts) {
      const list = /Options: ([\s\S]*?)`toJUnitXml/.exec(text)?.[1] ?? '';
      expect(list, `${file} has an "Options: …" list before toJUnitXml`).not.toBe('');
      expect(fields.filter((field) => !list.includes(`\`${field}\``)), `${file}: RunOptions fields missing from its Options: list`).toEqual([]);
    }
  });
});
