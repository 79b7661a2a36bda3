/**
 * Machine codes the sandbox sends in `x-sandbox-code` on answers a client acts on (openapi.yaml,
 * components/headers/SandboxCode), so clients match on the code, never on the message's wording.
 */
export const SANDBOX_CODE_HEADER = 'x-sandbox-code';

/** A webhook URL refused by the webhook target policy (400 naming the field). */
export const WEBHOOK_TARGET_REFUSED = 'webhook-target-refused';
