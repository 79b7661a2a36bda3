import { listenFor } from '../listening.js';
import type { AccountInfo, CallDefinition, Params } from './context.js';
import { callStep, str } from './context.js';

/**
 * POST /_sandbox/accounts, with the admin token when the run has one. Its webhooks go to the
 * receiver unless the step names a webhookUrl; when the run takes webhooks as a listener (the
 * sandbox refused the receiver's address), the account is created without the URL and then
 * taken as a listener's.
 */
export const accountCall: CallDefinition = {
  title: (p) => `account${p.name !== undefined ? ` "${str(p.name)}"` : ''}${Array.isArray(p.permissions) ? ` [${p.permissions.join(', ')}]` : ''}`,
  defaultStatus: 201,
  async prepare(p: Params, state) {
    const body: Record<string, unknown> = { name: str(p.name) ?? `${state.scenario.name.slice(0, 200)} (extra account)` };
    if (p.permissions !== undefined) body.permissions = p.permissions;
    body.webhookUrl = 'webhookUrl' in p ? p.webhookUrl : state.webhooks.viaListener ? null : state.receiver.url;
    return { method: 'POST', path: '/_sandbox/accounts', body, key: null, ...(state.adminToken !== undefined && { bearer: state.adminToken }) };
  },
  async afterSuccess(exchange, p, state) {
    if ('webhookUrl' in p || !state.webhooks.viaListener) return;
    await listenFor(state, accountInfo(exchange.responseBody).secretKey, state.receiver.url, false);
  },
};

export const accountStep = callStep(accountCall);

/** The fields of an account answer that the runner keeps. */
export function accountInfo(body: unknown): AccountInfo {
  const b = (body ?? {}) as Record<string, unknown>;
  return {
    secretKey: String(b.secretKey),
    ...(typeof b.id === 'string' && { id: b.id }),
    ...(typeof b.name === 'string' && { name: b.name }),
    ...(typeof b.webhookSecret === 'string' && { webhookSecret: b.webhookSecret }),
  };
}
