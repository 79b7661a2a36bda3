import type { AccountInfo, CallDefinition, Params } from './context.js';
import { callStep, str } from './context.js';

/** POST /_sandbox/accounts, with the admin token when the run has one. */
export const accountCall: CallDefinition = {
  title: (p) => `account${p.name !== undefined ? ` "${str(p.name)}"` : ''}${Array.isArray(p.permissions) ? ` [${p.permissions.join(', ')}]` : ''}`,
  defaultStatus: 201,
  async prepare(p: Params, state) {
    const body: Record<string, unknown> = { name: str(p.name) ?? `${state.scenario.name.slice(0, 200)} (extra account)` };
    if (p.permissions !== undefined) body.permissions = p.permissions;
    body.webhookUrl = 'webhookUrl' in p ? p.webhookUrl : state.receiver.url;
    return { method: 'POST', path: '/_sandbox/accounts', body, key: null, ...(state.adminToken !== undefined && { bearer: state.adminToken }) };
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
