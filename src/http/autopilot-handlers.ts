import type { Autopilot } from '../autopilot/autopilot.js';
import type { AccountRecord } from '../accounts/accounts.js';
import { owner, type Handlers } from './call.js';

const accountId = (call: { account: AccountRecord | undefined }): string => owner(call).id;

export function createAutopilotHandlers(autopilot: Autopilot): Handlers {
  return {
    getAutopilot: async (call) => ({ status: 200, json: await autopilot.state(accountId(call)) }),
    setAutopilot: async (call) => ({ status: 200, json: await autopilot.set(call.unit, accountId(call), call.body) }),
    clearAutopilot: async (call) => ({ status: 200, json: await autopilot.clear(call.unit, accountId(call)) }),
  };
}
