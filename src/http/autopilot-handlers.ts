import type { Autopilot } from '../autopilot/autopilot.js';
import type { AccountRecord } from '../accounts/accounts.js';
import { owner, type Handlers } from './call.js';

const accountId = (call: { account: AccountRecord | undefined }): string => owner(call).id;

export function createAutopilotHandlers(autopilot: Autopilot): Handlers {
  return {
    getAutopilot: (call) => ({ status: 200, json: autopilot.state(accountId(call)) }),
    setAutopilot: (call) => ({ status: 200, json: autopilot.set(accountId(call), call.body) }),
    clearAutopilot: (call) => ({ status: 200, json: autopilot.clear(accountId(call)) }),
  };
}
