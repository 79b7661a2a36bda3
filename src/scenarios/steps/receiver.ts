import type { ReceiverConfig } from '../types.js';
import type { StepDefinition } from './context.js';
import { str } from './context.js';

/** Reconfigures the scenario's webhook receiver, e.g. `failFirst: 2` to fail the next two requests. */
export const receiverStep: StepDefinition = {
  title: (p) => (p.failFirst !== undefined ? `receiver fails the next ${str(p.failFirst)} request(s) with ${str(p.status) ?? 500}` : 'receiver'),
  async run(p, state) {
    state.receiver.configure(p as ReceiverConfig);
    return { response: { url: state.receiver.url, received: state.receiver.requests.length } };
  },
};
