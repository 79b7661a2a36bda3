import { parentPort } from 'node:worker_threads';
import { pixQrPng } from './pix-qr.js';

/** One Pix QR to draw: the main thread's request id and the BR Code. */
export interface QrJob {
  id: number;
  code: string;
}

/** The base64 PNG of a job, or why it could not be drawn. */
export type QrResult = { id: number; base64: string } | { id: number; error: string };

if (parentPort === null) throw new Error('qr-worker must run in a worker thread');
const port = parentPort;
// Jobs come in batches (one message per turn of the main thread) and go back the same way.
port.on('message', (jobs: QrJob[]) => {
  void Promise.all(
    jobs.map((job) =>
      pixQrPng(job.code).then(
        (png): QrResult => ({ id: job.id, base64: png.toString('base64') }),
        (error: unknown): QrResult => ({ id: job.id, error: error instanceof Error ? error.message : String(error) }),
      ),
    ),
  ).then((results) => port.postMessage(results));
});
