import type { Exchange, Mismatch, ScenarioResult, StepFailureInfo, StepResult } from '../types.js';

/** Colour functions; identity when colours are off. */
export interface Paint {
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  dim(text: string): string;
  bold(text: string): string;
}

const wrap = (open: number, close: number) => (text: string) => `\u001b[${open}m${text}\u001b[${close}m`;
export const COLORS: Paint = { red: wrap(31, 39), green: wrap(32, 39), yellow: wrap(33, 39), dim: wrap(2, 22), bold: wrap(1, 22) };
const id = (text: string): string => text;
export const PLAIN: Paint = { red: id, green: id, yellow: id, dim: id, bold: id };

const MAX_LINES = 25;

/** A value as JSON: on one line when short, else indented and cut after MAX_LINES lines. */
export function showValue(value: unknown, indent: string): string {
  if (value === undefined) return 'undefined';
  const flat = JSON.stringify(value);
  if (flat === undefined) return String(value);
  if (flat.length <= 100) return flat;
  const lines = JSON.stringify(value, null, 2).split('\n');
  const cut = lines.length > MAX_LINES ? [...lines.slice(0, MAX_LINES), `… (${lines.length - MAX_LINES} more lines)`] : lines;
  return cut.join(`\n${indent}`);
}

export function formatMismatch(m: Mismatch, indent: string, paint: Paint): string[] {
  const inner = `${indent}  `;
  const pad = `${inner}          `;
  return [
    `${indent}${paint.bold(m.path || '(the value)')}${m.note ? paint.dim(`  ${m.note}`) : ''}`,
    `${inner}${paint.green('expected:')} ${showValue(m.expected, pad)}`,
    `${inner}${paint.red('actual:  ')} ${showValue(m.actual, pad)}`,
  ];
}

export function formatExchange(e: Exchange, indent: string, paint: Paint): string[] {
  const lines = [`${indent}${paint.dim('HTTP')} ${e.method} ${e.url} → ${e.status === 0 ? paint.red('no answer') : e.status} ${paint.dim(`(${e.durationMs} ms)`)}`];
  if (e.error) lines.push(`${indent}  ${e.error}`);
  if (e.requestBody !== undefined) lines.push(`${indent}  ${paint.dim('request body: ')}${showValue(e.requestBody, `${indent}  `)}`);
  if (e.status !== 0) lines.push(`${indent}  ${paint.dim('response body:')} ${showValue(e.responseBody, `${indent}  `)}`);
  return lines;
}

/** The failure of a step: message, expected vs actual per difference, details, the HTTP call. */
export function formatFailure(failure: StepFailureInfo, indent: string, paint: Paint): string[] {
  const lines = [`${indent}${paint.red(failure.message)}`];
  for (const m of failure.mismatches) lines.push(...formatMismatch(m, indent, paint));
  for (const d of failure.details) lines.push(`${indent}${d}`);
  if (failure.exchange) lines.push(...formatExchange(failure.exchange, indent, paint));
  return lines;
}

/** `3. pay 100000001 by PIX [pay1]`; a step's own name is followed by its kind. */
export function stepLabel(step: StepResult): string {
  const number = step.index >= 0 ? `${step.index + 1}. ` : '';
  const kind = step.title.startsWith(step.kind) || step.kind === 'request' || step.kind === 'setup' ? '' : ` (${step.kind})`;
  return `${number}${step.title}${kind}${step.id !== undefined ? ` [${step.id}]` : ''}`;
}

/** One step's progress line (and its failure under it). */
export function formatStep(step: StepResult, file: string, paint: Paint): string[] {
  if (step.outcome === 'skipped') return [`  ${paint.dim(`- ${stepLabel(step)} (skipped)`)}`];
  const time = paint.dim(`${step.durationMs} ms`);
  if (step.outcome === 'passed') return [`  ${paint.green('✓')} ${stepLabel(step)}  ${time}`];
  return [
    `  ${paint.red('✗')} ${paint.red(stepLabel(step))}  ${time}  ${paint.dim(`${file}:${step.line}`)}`,
    ...(step.failure ? formatFailure(step.failure, '      ', paint) : []),
  ];
}

export const scenarioHeading = (file: string, name: string, paint: Paint): string => `${paint.bold(file)} ${paint.dim('—')} ${name}`;

/** A whole scenario's report: heading, every step, failures in full. Handy as a test assertion message. */
export function formatScenarioResult(result: ScenarioResult, paint: Paint = PLAIN): string {
  const lines = [
    `${result.ok ? paint.green('PASS') : paint.red('FAIL')} ${scenarioHeading(result.file, result.name, paint)} ${paint.dim(`(${result.durationMs} ms)`)}`,
    ...result.steps.flatMap((step) => formatStep(step, result.file, paint)),
  ];
  return lines.join('\n');
}

/** `ESC[…m` sequences out, for files and XML. */
export const stripAnsi = (text: string): string => text.replace(/\u001b\[[0-9;]*m/g, '');
