import type { Faults } from '../faults/faults.js';
import { owner, type Handlers } from './call.js';

export function createFaultHandlers(faults: Faults): Handlers {
  return {
    getFaults: async (call) => ({ status: 200, json: await faults.state(owner(call).id) }),
    setFaults: async (call) => ({ status: 200, json: await faults.set(call.unit, owner(call).id, call.body) }),
    clearFaults: async (call) => ({ status: 200, json: await faults.clear(call.unit, owner(call).id) }),
  };
}
