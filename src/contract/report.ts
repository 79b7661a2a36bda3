import { relative } from 'node:path';
import type { VerifyResult } from './verify.js';

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

function displayPath(file: string): string {
  const rel = relative(process.cwd(), file);
  return rel.startsWith('..') ? file : rel;
}

/**
 * The summary `payments-sandbox verify` prints after Pact's own output: what was verified
 * against what, one line per interaction, every failure with its mismatches, the verdict.
 */
export function formatVerifyReport(result: Omit<VerifyResult, 'report'>): string {
  const lines: string[] = [];
  const total = result.pacts.reduce((n, p) => n + p.interactions.length, 0);
  lines.push(`Pact verification against ${result.providerBaseUrl}`);
  lines.push(`  target: ${result.target}`);
  lines.push(`  pacts (${plural(total, 'interaction')}):`);
  for (const pact of result.pacts) {
    lines.push(`    ${displayPath(pact.file)}  ${pact.consumer} → ${pact.provider}, ${plural(pact.interactions.length, 'interaction')} (spec ${pact.specification})`);
  }
  if (result.outcomes.length > 0) {
    lines.push('', 'Interactions:');
    for (const o of result.outcomes) lines.push(`  ${o.ok ? '✓' : '✗'} ${o.description}${o.duration ? ` (${o.duration})` : ''}`);
  }
  if (result.failures.length > 0) {
    lines.push('', 'Failures:');
    result.failures.forEach((f, i) => {
      lines.push(`  ${i + 1}) ${f.interaction.replace(/^Verifying a pact between /, '')}`);
      for (const p of f.problems) lines.push(`       ${p}`);
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
      ? `Verification PASSED: ${plural(result.outcomes.length, 'interaction')} verified against ${result.providerBaseUrl} (${seconds} s)`
      : `Verification FAILED: ${failed} of ${plural(result.outcomes.length, 'interaction')} failed` +
          `${result.stateErrors.length > 0 ? `, ${plural(result.stateErrors.length, 'state error')}` : ''}` +
          `${result.error !== undefined ? ', the verifier did not run' : ''} against ${result.providerBaseUrl} (${seconds} s)`,
  );
  return `${lines.join('\n')}\n`;
}
