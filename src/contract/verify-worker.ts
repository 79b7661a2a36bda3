/**
 * `payments-sandbox verify` runs the verification in this child process: Pact's native core
 * prints its own coloured report straight to file descriptor 1, which only a parent holding
 * the other end of the pipe can keep out of the user's terminal. The parent sends one
 * request over IPC and gets the result (or the error) back the same way.
 */
import { verifyAgainstInProcessSandbox, verifyPacts, type InProcessVerifyOptions, type VerifyOptions, type VerifyResult } from './verify.js';

export type WorkerRequest = { mode: 'provider'; options: VerifyOptions } | { mode: 'in-process'; options: InProcessVerifyOptions };
export type WorkerReply = { ok: true; result: Omit<VerifyResult, 'report'> } | { ok: false; error: { name: string; message: string; stack?: string } };

function reply(message: WorkerReply): void {
  process.send?.(message, () => process.disconnect());
}

process.once('message', (request: WorkerRequest) => {
  const run = request.mode === 'provider' ? verifyPacts(request.options) : verifyAgainstInProcessSandbox(request.options);
  run.then(
    ({ report: _report, ...result }) => reply({ ok: true, result }),
    (error: unknown) => {
      const e = error instanceof Error ? error : new Error(String(error));
      reply({ ok: false, error: { name: e.constructor.name, message: e.message, ...(e.stack !== undefined && { stack: e.stack }) } });
    },
  );
});
