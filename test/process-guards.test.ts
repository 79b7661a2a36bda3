import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { Logger } from '../src/log.js';
import { installProcessGuards, type GuardedProcess } from '../src/process-guards.js';

/** A stand-in for `process`: the guards' events, and an exit that is only recorded. */
function fakeProcess(): GuardedProcess & EventEmitter & { exits: number[] } {
  const emitter = new EventEmitter() as EventEmitter & { exits: number[]; exit(code: number): void };
  emitter.exits = [];
  emitter.exit = (code: number) => void emitter.exits.push(code);
  return emitter as GuardedProcess & EventEmitter & { exits: number[] };
}

function recordingLogger(): { logger: Logger; lines: Array<{ level: string; obj: Record<string, unknown>; msg: string }> } {
  const lines: Array<{ level: string; obj: Record<string, unknown>; msg: string }> = [];
  const at = (level: string) => (obj: Record<string, unknown>, msg: string) => void lines.push({ level, obj, msg });
  return { logger: { error: at('error'), fatal: at('fatal') } as unknown as Logger, lines };
}

describe('installProcessGuards (payments-sandbox start)', () => {
  it('logs an unhandled rejection and keeps the process running', () => {
    const proc = fakeProcess();
    const { logger, lines } = recordingLogger();
    installProcessGuards(logger, proc);
    const reason = new Error('lost promise');
    proc.emit('unhandledRejection', reason);
    expect(lines).toEqual([{ level: 'error', obj: { err: reason }, msg: 'unhandled promise rejection; the sandbox keeps serving' }]);
    expect(proc.exits).toEqual([]);
  });

  it('logs an uncaught exception at fatal level and exits with code 1', () => {
    const proc = fakeProcess();
    const { logger, lines } = recordingLogger();
    installProcessGuards(logger, proc);
    const error = new TypeError('broken state');
    proc.emit('uncaughtException', error, 'uncaughtException');
    expect(lines).toMatchObject([{ level: 'fatal', obj: { err: error, origin: 'uncaughtException' } }]);
    expect(proc.exits).toEqual([1]);
  });
});
