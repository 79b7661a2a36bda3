import type { Autopilot } from '../autopilot/autopilot.js';
import type { AutopilotRules } from '../spec/types.js';
import { owner, type Call, type Handlers } from './router.js';

const accountId = (call: Call): string => owner(call).id;

export function createAutopilotHandlers(autopilot: Autopilot): Handlers {
  return {
    getAutopilot: async (call) => ({ status: 200, json: await autopilot.state(accountId(call)) }),
    setAutopilot: async (call) => ({ status: 200, json: await autopilot.set(accountId(call), call.body as AutopilotRules) }),
    clearAutopilot: async (call) => ({ status: 200, json: await autopilot.clear(accountId(call)) }),
  };
}
