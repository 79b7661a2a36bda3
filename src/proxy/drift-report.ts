import { toJUnitXml } from '../scenarios/report/junit.js';
import type { RunSummary, StepResult } from '../scenarios/types.js';
import type { Difference } from './drift-compare.js';
import type { DriftReport, EntryResult } from './drift-run.js';

/** Long values (a QR code's base64) are cut: the line says where, the JSON report has them whole. */
const MAX_VALUE = 80;

function show(value: unknown): string {
  if (value === undefined) return 'absent';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > MAX_VALUE ? `${text.slice(0, MAX_VALUE - 1)}…` : text;
}

const where = (difference: Difference): string => (difference.rule === 'status' ? 'status' : difference.rule === 'state' ? 'state' : difference.pointer || '/');

/** `#3 GET /transactions/123 /status: real: "APPROVED" · sandbox: "PENDING"`, the note after it. */
export function differenceLine(entry: Pick<EntryResult, 'entry' | 'method' | 'path'>, difference: Difference): string {
  if (difference.rule === 'presence' && difference.pointer === '' && typeof difference.real === 'string' && difference.note !== undefined) return `#${entry.entry} ${entry.method} ${entry.path} webhook: real: ${difference.real} · sandbox: absent (${difference.note})`;
  const values = difference.rule === 'state' ? `real: ${difference.real} on its own · sandbox: ${difference.note ?? show(difference.sandbox)}` : `real: ${show(difference.real)} · sandbox: ${show(difference.sandbox)}`;
  const note = difference.rule === 'state' || difference.note === undefined ? '' : ` (${difference.rule}: ${difference.note})`;
  return `#${entry.entry} ${entry.method} ${entry.path} ${where(difference)}: ${values}${note}`;
}

/** Every difference, one line each; nothing for a session without any. */
export function consoleLines(report: DriftReport): string[] {
  return report.entries.flatMap((entry) => entry.differences.map((difference) => differenceLine(entry, difference)));
}

/** The closing line, on stderr: what was replayed where, and how many differences. */
export function summaryLine(report: DriftReport): string {
  const where = report.inProcess ? 'an in-process sandbox' : report.baseUrl;
  const driven = report.entries.reduce((n, e) => n + e.driven.length, 0);
  const skipped = report.webhooks.length > 0 ? `, ${report.webhooks.length} webhook${report.webhooks.length > 1 ? 's' : ''} compared with the sandbox's deliveries` : '';
  const exchanges = report.entries.length - report.webhooks.length;
  return `drift: ${exchanges} exchange${exchanges === 1 ? '' : 's'} of ${report.file} replayed against ${where} (${driven} control call${driven === 1 ? '' : 's'}${skipped}): ${report.differences === 0 ? 'no difference' : `${report.differences} difference${report.differences > 1 ? 's' : ''}`}`;
}

/** The JSON report: what a user sends back (it holds the differing values, not the session). */
export function jsonReport(report: DriftReport): string {
  return `${JSON.stringify(
    {
      file: report.file,
      sandbox: report.inProcess ? 'in-process' : report.baseUrl,
      startedAt: report.startedAt,
      durationMs: report.durationMs,
      differences: report.differences,
      entries: report.entries.map((entry) => ({
        entry: entry.entry,
        method: entry.method,
        path: entry.path,
        status: { real: entry.realStatus, sandbox: entry.sandboxStatus },
        driven: entry.driven,
        differences: entry.differences.map((d) => ({ pointer: d.pointer, rule: d.rule, real: d.real ?? null, sandbox: d.sandbox ?? null, ...(d.real === undefined && { realAbsent: true }), ...(d.sandbox === undefined && { sandboxAbsent: true }), ...(d.note !== undefined && { note: d.note }), line: differenceLine(entry, d) })),
      })),
      webhooks: report.webhooks,
    },
    null,
    2,
  )}\n`;
}

/** JUnit XML through the scenario runner's writer: the session a suite, each replayed exchange a test case, a difference its failure. */
export function junitReport(report: DriftReport): string {
  const steps: StepResult[] = report.entries.map((entry, index) => ({
    index,
    kind: 'request',
    title: `#${entry.entry} ${entry.method} ${entry.path}${entry.driven.length > 0 ? ` (after: ${entry.driven.join(', ')})` : ''}`,
    line: entry.entry,
    outcome: entry.differences.length === 0 ? 'passed' : 'failed',
    durationMs: entry.durationMs,
    ...(entry.differences.length > 0 && {
      failure: {
        message: `${entry.differences.length} difference${entry.differences.length > 1 ? 's' : ''} from the recording`,
        mismatches: entry.differences.map((d) => ({ path: where(d), expected: d.real, actual: d.sandbox, ...(d.note !== undefined && { note: `${d.rule}: ${d.note}` }) })),
        details: entry.differences.map((d) => differenceLine(entry, d)),
      },
    }),
  }));
  const summary: RunSummary = {
    ok: report.differences === 0,
    durationMs: report.durationMs,
    startedAt: report.startedAt,
    baseUrl: report.baseUrl,
    inProcess: report.inProcess,
    results: [{ file: report.file, name: `drift of ${report.file}`, ok: report.differences === 0, durationMs: report.durationMs, startedAt: report.startedAt, steps }],
  };
  return toJUnitXml(summary);
}
