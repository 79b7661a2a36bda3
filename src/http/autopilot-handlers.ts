import type { Autopilot } from '../autopilot/autopilot.js';
import type { AutopilotRules } from '../spec/types.js';
import { HttpError } from './errors.js';
import type { Call, Handlers } from './router.js';

function accountId(call: Call): string {
  if (!call.account) throw new HttpError(401, 'API key invalid or absent');
  return call.account.id;
}

export function createAutopilotHandlers(autopilot: Autopilot): Handlers {
  return {
    getAutopilot: (call) => ({ status: 200, json: autopilot.state(accountId(call)) }),
    setAutopilot: (call) => ({ status: 200, json: autopilot.set(accountId(call), call.body as AutopilotRules) }),
    clearAutopilot: (call) => ({ status: 200, json: autopilot.clear(accountId(call)) }),
  };
}
