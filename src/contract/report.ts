import { relative } from 'node:path';
import { PLAIN, type Paint } from '../scenarios/report/format.js';
import type { InteractionOutcome, VerifyResult } from './results.js';

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

function displayPath(file: string): string {
  const rel = relative(process.cwd(), file);
  return rel.startsWith('..') ? file : rel;
}

export interface VerifyReportOptions {
  /** Colours for a terminal (default none: the report is also kept in files and CI logs). */
  paint?: Paint;
  /** Every interaction with its outcome, not only the failed ones. */
  verbose?: boolean;
}

/** A table with its columns padded to their widest cell; columns listed in `right` are right-aligned. */
function table(rows: string[][], right: ReadonlySet<number>, indent: string): string[] {
  const widths = rows[0]?.map((_, c) => Math.max(...rows.map((r) => [...(r[c] ?? '')].length))) ?? [];
  return rows.map(
    (row) =>
      indent +
      row
        .map((cell, c) => {
          const pad = ' '.repeat((widths[c] ?? 0) - [...cell].length);
          return right.has(c) ? pad + cell : cell + pad;
        })
        .join('  ')
        .trimEnd(),
  );
}

/**
 * Which pact each outcome belongs to: Pact reports outcomes in pact order, by description
 * only, so each pact takes the outcomes of its own interactions' descriptions, once each.
 */
function outcomesByPact(result: Omit<VerifyResult, 'report'>): InteractionOutcome[][] {
  const left = [...result.outcomes];
  return result.pacts.map((pact) => {
    const mine: InteractionOutcome[] = [];
    for (const interaction of pact.interactions) {
      const at = left.findIndex((o) => o.description === interaction.description);
      if (at >= 0) mine.push(...left.splice(at, 1));
    }
    return mine;
  });
}

/**
 * What `payments-sandbox verify` prints: what was verified against what, one summary row per
 * pact file, the details of every failure (the passes only with `verbose`), the verdict.
 */
export function formatVerifyReport(result: Omit<VerifyResult, 'report'>, options: VerifyReportOptions = {}): string {
  const p = options.paint ?? PLAIN;
  const lines: string[] = [];
  const total = result.pacts.reduce((n, pact) => n + pact.interactions.length, 0);
  lines.push(`Pact verification against ${result.providerBaseUrl}`);
  lines.push(`  target: ${result.target}`);
  lines.push(`  pacts (${plural(total, 'interaction')}):`);
  const perPact = outcomesByPact(result);
  const rows = [['pact file', 'consumer → provider', 'spec', 'interactions', 'passed', 'failed']];
  result.pacts.forEach((pact, i) => {
    const outcomes = perPact[i] ?? [];
    const failed = outcomes.filter((o) => !o.ok).length;
    rows.push([displayPath(pact.file), `${pact.consumer} → ${pact.provider}`, pact.specification, String(pact.interactions.length), String(outcomes.length - failed), String(failed)]);
  });
  lines.push(...table(rows, new Set([3, 4, 5]), '    '));

  const shown = options.verbose ? result.outcomes : result.outcomes.filter((o) => !o.ok);
  if (shown.length > 0) {
    lines.push('', options.verbose ? 'Interactions:' : 'Failed interactions:');
    for (const o of shown) lines.push(`  ${o.ok ? p.green('✓') : p.red('✗')} ${o.description}${o.duration ? p.dim(` (${o.duration})`) : ''}`);
  }
  if (result.failures.length > 0) {
    lines.push('', 'Failures:');
    result.failures.forEach((f, i) => {
      lines.push(`  ${i + 1}) ${p.bold(f.interaction.replace(/^Verifying a pact between /, ''))}`);
      for (const problem of f.problems) lines.push(`       ${problem}`);
    });
  }
  if (result.stateErrors.length > 0) {
    lines.push('', 'Provider states that could not be set up:');
    for (const e of result.stateErrors) lines.push(`  - ${e}`);
  }
  if (result.notes.length > 0) {
    lines.push('', 'Notes:');
    for (const n of result.notes) lines.push(`  - ${n}`);
  }
  if (result.error !== undefined) lines.push('', `The verifier could not run: ${result.error}`);
  const failed = result.outcomes.filter((o) => !o.ok).length;
  const seconds = (result.durationMs / 1000).toFixed(1);
  lines.push(
    '',
    result.ok
      ? p.green(`Verification PASSED: ${plural(result.outcomes.length, 'interaction')} verified against ${result.providerBaseUrl} (${seconds} s)`)
      : p.red(
          `Verification FAILED: ${failed} of ${plural(result.outcomes.length, 'interaction')} failed` +
            `${result.stateErrors.length > 0 ? `, ${plural(result.stateErrors.length, 'state error')}` : ''}` +
            `${result.error !== undefined ? ', the verifier did not run' : ''} against ${result.providerBaseUrl} (${seconds} s)`,
        ),
  );
  return `${lines.join('\n')}\n`;
}
