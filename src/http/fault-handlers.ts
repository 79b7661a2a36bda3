import type { Faults, FaultRules } from '../faults/faults.js';
import { owner, type Handlers } from './router.js';

export function createFaultHandlers(faults: Faults): Handlers {
  return {
    getFaults: async (call) => ({ status: 200, json: await faults.state(owner(call).id) }),
    setFaults: async (call) => ({ status: 200, json: await faults.set(owner(call).id, call.body as FaultRules) }),
    clearFaults: async (call) => ({ status: 200, json: await faults.clear(owner(call).id) }),
  };
}
