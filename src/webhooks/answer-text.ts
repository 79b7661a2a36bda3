/**
 * How the delivery log words an answer and a failure, shared by the dispatcher, the `listen`
 * command and the test kit; apart from the dispatcher, so that the kit's import does not load
 * the targets' network policy (node:dns) it never uses.
 */
const EXCERPT_BYTES = 1024;

/** The first KiB of an answer's body, for the delivery log (the listener reports the same). */
export async function excerpt(body: AsyncIterable<Buffer> & { destroy?: () => void }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= EXCERPT_BYTES) {
      body.destroy?.();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8');
}

/** A connection error as the delivery log shows it: its code and message. */
export function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: string }).code ?? ((error as { cause?: { code?: string } }).cause?.code);
  return code ? `${code}: ${error.message}` : error.message;
}
