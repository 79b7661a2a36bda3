import type { Faults } from '../faults/faults.js';
import { owner } from './call.js';
import { json, type EndpointTable } from './endpoint.js';

export interface FaultServices {
  faults: Faults;
}

/** The account's fault rules. */
export const faultEndpoints = {
  getFaults: { handle: async (call, s) => json(200, await s.faults.state(owner(call).id)) },
  setFaults: { handle: async (call, s) => json(200, await s.faults.set(call.unit, owner(call).id, call.body)) },
  clearFaults: { handle: async (call, s) => json(200, await s.faults.clear(call.unit, owner(call).id)) },
} satisfies EndpointTable<FaultServices>;
