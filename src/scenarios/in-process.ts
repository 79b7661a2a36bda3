import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface InProcessSandbox {
  url: string;
  stop(): Promise<void>;
}

export interface InProcessOptions {
  /** Delay before instructions are filled (default: the sandbox's, 2000 ms). */
  instructionDelayMs?: number;
}

/**
 * A sandbox in this process, on a free port of 127.0.0.1 and a temporary store that is
 * removed when it stops. The server modules load only when this is used, so a run
 * against --base-url never pays for them.
 */
export async function startInProcessSandbox(options: InProcessOptions = {}): Promise<InProcessSandbox> {
  const [{ startServer }, { resolveConfig }, { createLogger }] = await Promise.all([import('../server.js'), import('../config.js'), import('../log.js')]);
  const dir = await mkdtemp(join(tmpdir(), 'payments-sandbox-scenarios-'));
  try {
    const config = resolveConfig({
      port: 0,
      host: '127.0.0.1',
      dataFile: join(dir, 'sandbox.json'),
      logLevel: 'silent',
      ...(options.instructionDelayMs !== undefined && { instructionDelayMs: options.instructionDelayMs }),
    });
    const running = await startServer(config, createLogger('silent'));
    let stopped: Promise<void> | undefined;
    return {
      url: running.url,
      stop: () =>
        (stopped ??= (async () => {
          await running.stop();
          await rm(dir, { recursive: true, force: true });
        })()),
    };
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}
