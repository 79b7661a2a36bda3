import type { Autopilot } from '../autopilot/autopilot.js';
import { owner } from './call.js';
import { json, type EndpointTable } from './endpoint.js';

export interface AutopilotServices {
  autopilot: Autopilot;
}

/** The account's autopilot rules. */
export const autopilotEndpoints = {
  getAutopilot: { handle: async (call, s) => json(200, await s.autopilot.state(call.reads, owner(call).id)) },
  setAutopilot: { handle: async (call, s) => json(200, await s.autopilot.set(call.unit, owner(call).id, call.body)) },
  clearAutopilot: { handle: async (call, s) => json(200, await s.autopilot.clear(call.unit, owner(call).id)) },
} satisfies EndpointTable<AutopilotServices>;
