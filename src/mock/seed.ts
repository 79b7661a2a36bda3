/**
 * The seed of one generated body: FNV-1a (32-bit) of the sandbox's seed, the operation, the
 * status and the attempt. Each body depends on nothing else, so the order of requests never
 * changes what a request gets.
 */
export function seedFor(seed: number, operationId: string, status: number, attempt = 0): number {
  let hash = 0x811c9dc5;
  for (const char of `${seed}\u0000${operationId}\u0000${status}\u0000${attempt}`) {
    hash ^= char.charCodeAt(0);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}
