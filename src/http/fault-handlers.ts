import type { Faults } from '../faults/faults.js';
import { owner, type Handlers } from './call.js';

export function createFaultHandlers(faults: Faults): Handlers {
  return {
    getFaults: (call) => ({ status: 200, json: faults.state(owner(call).id) }),
    setFaults: (call) => ({ status: 200, json: faults.set(owner(call).id, call.body) }),
    clearFaults: (call) => ({ status: 200, json: faults.clear(owner(call).id) }),
  };
}
