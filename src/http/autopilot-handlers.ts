import type { Autopilot } from '../autopilot/autopilot.js';
import type { AutopilotRules } from '../spec/types.js';
import { owner, type Call, type Handlers } from './router.js';

const accountId = (call: Call): string => owner(call).id;

export function createAutopilotHandlers(autopilot: Autopilot): Handlers {
  return {
    getAutopilot: (call) => ({ status: 200, json: autopilot.state(accountId(call)) }),
    setAutopilot: (call) => ({ status: 200, json: autopilot.set(accountId(call), call.body as AutopilotRules) }),
    clearAutopilot: (call) => ({ status: 200, json: autopilot.clear(accountId(call)) }),
  };
}
