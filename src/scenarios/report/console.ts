import type { RunEvent, RunSummary } from '../types.js';
import { COLORS, formatStep, PLAIN, scenarioHeading, stepLabel, type Paint } from './format.js';

export interface ConsoleReporterOptions {
  stream?: NodeJS.WritableStream & { isTTY?: boolean };
  /** Default: on when the stream is a TTY and NO_COLOR is unset (FORCE_COLOR forces it on). */
  color?: boolean;
  env?: Record<string, string | undefined>;
}

export function useColor(stream: { isTTY?: boolean }, env: Record<string, string | undefined> = process.env): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '0' && env.FORCE_COLOR !== '') return true;
  return stream.isTTY === true;
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** Progress as it happens (scenario headings, one line per step with its time), then a summary. */
export class ConsoleReporter {
  private readonly stream: NodeJS.WritableStream;
  private readonly paint: Paint;

  constructor(options: ConsoleReporterOptions = {}) {
    const stream = options.stream ?? process.stdout;
    this.stream = stream;
    this.paint = (options.color ?? useColor(stream, options.env)) ? COLORS : PLAIN;
  }

  private write(lines: string[]): void {
    this.stream.write(`${lines.join('\n')}\n`);
  }

  readonly onEvent = (event: RunEvent): void => {
    const p = this.paint;
    switch (event.type) {
      case 'run:start':
        this.write([
          p.dim(`Running ${event.files.length} scenario${event.files.length === 1 ? '' : 's'} against ${event.inProcess ? `an in-process sandbox on a temporary store (${event.baseUrl})` : event.baseUrl}`),
          '',
        ]);
        break;
      case 'run:note':
        this.write([p.dim(event.message), '']);
        break;
      case 'scenario:start':
        this.write([scenarioHeading(event.file, event.name, p)]);
        break;
      case 'step:end':
        this.write(formatStep(event.step, event.file, p));
        break;
      case 'scenario:end':
        this.write(['']);
        break;
    }
  };

  summary(summary: RunSummary): void {
    const p = this.paint;
    const failed = summary.results.filter((r) => !r.ok);
    const passed = summary.results.length - failed.length;
    const counts = [failed.length ? p.red(`${failed.length} failed`) : '', passed ? p.green(`${passed} passed`) : '', `${summary.results.length} total`].filter(Boolean).join(', ');
    const lines = [`${p.bold('Scenarios:')} ${counts} ${p.dim(`(${seconds(summary.durationMs)})`)}`];
    if (failed.length) {
      lines.push(p.bold('Failed:'));
      for (const result of failed) {
        const step = result.steps.find((s) => s.outcome === 'failed');
        lines.push(`  ${p.red('✗')} ${result.file} ${p.dim('—')} ${result.name}${step ? p.dim(`  (step ${stepLabel(step)}, line ${step.line})`) : ''}`);
      }
    }
    this.write(lines);
  }
}
