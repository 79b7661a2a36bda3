// @ts-check
/**
 * The fixed reply of both baselines: a product as POST /v2/products answers
 * it, so every server under test sends a body of the same size.
 */
export const FIXED_PRODUCT = JSON.stringify({
  id: 'prd_3f1c2a9e-8b7d-4c6e-9a1f-2b3c4d5e6f70',
  createdByUserId: 'usr_0b9f3c52-6c1e-4d2a-9f5e-7a8b9c0d1e2f',
  name: 'bench 0123456789abcdef',
  description: null,
  imageUrl: null,
  externalId: null,
  active: true,
  metadata: {},
  deletedAt: null,
  createdAt: '2026-01-31T12:00:00.000Z',
  updatedAt: '2026-01-31T12:00:00.000Z',
});

/** @param {string[]} argv */
export function portArg(argv) {
  const i = argv.indexOf('--port');
  const port = Number(i >= 0 ? argv[i + 1] : NaN);
  if (!Number.isInteger(port) || port <= 0) throw new Error('usage: --port <port>');
  return port;
}
