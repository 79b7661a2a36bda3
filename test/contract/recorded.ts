import type { PactV4 } from '@pact-foundation/pact';

/** The part of pact-core's ConsumerPact used here; PactV4 keeps it in a private field. */
interface MockServerRegistry {
  mockServerMatchedSuccessfully(port: number): boolean;
}

function mockServers(pact: PactV4): MockServerRegistry {
  const inner = (pact as unknown as { pact?: Partial<MockServerRegistry> }).pact;
  if (typeof inner?.mockServerMatchedSuccessfully !== 'function') throw new Error('PactV4 no longer exposes its ConsumerPact: update test/contract/recorded.ts');
  return inner as MockServerRegistry;
}

/**
 * Pact's mock server answers before it records the match (the match travels to its event
 * loop over a channel), so on a busy machine executeTest could look before it is recorded
 * and fail with "expected but not received". Call this after each request a consumer test
 * makes: it waits, up to a deadline, until the mock server counts the match; a request that
 * really mismatched still fails after it.
 */
export async function recordedBy(pact: PactV4, baseUrl: string): Promise<void> {
  const port = Number(new URL(baseUrl).port);
  const deadline = Date.now() + 5000;
  while (!mockServers(pact).mockServerMatchedSuccessfully(port) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
}
