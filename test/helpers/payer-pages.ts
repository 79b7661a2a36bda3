import { expect } from 'vitest';
import type { components } from '../../src/spec/openapi-types.js';
import type { Client } from './sandbox.js';

export type PayerPages = components['schemas']['PayerPages'];

/** The owner's view of a transaction's payer page links (GET /_sandbox/transactions/:id/payer-pages), each with its token. */
export async function payerPages(client: Client, id: string): Promise<PayerPages> {
  const res = await client.get<PayerPages>(`/_sandbox/transactions/${encodeURIComponent(id)}/payer-pages`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/**
 * A payer's button press: POST to a link the sandbox emitted, sent to `baseUrl` (the links name
 * the public URL, which may not be where the test's sandbox listens), redirects not followed.
 */
export function payerPost(baseUrl: string, link: string, headers: Record<string, string> = {}): Promise<Response> {
  const u = new URL(link);
  return fetch(new URL(`${u.pathname}${u.search}`, baseUrl), { method: 'POST', redirect: 'manual', headers });
}

/** A payer page link's button: `/approve` or `/reject` after its path, the token kept. */
export function payerAction(pageUrl: string, action: 'approve' | 'reject'): string {
  const u = new URL(pageUrl);
  u.pathname = `${u.pathname}/${action}`;
  return u.toString();
}

/** The token a payer page link carries. */
export const tokenOf = (url: string): string => new URL(url).searchParams.get('token') ?? '';

/** A link's path and query: what a test sends to its own sandbox, whatever host the public URL names. */
export const localPath = (url: string): string => {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
};
