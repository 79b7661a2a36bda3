// sandbox-setup.js: jest runs globalSetup in plain Node, where the sandbox's modules load as they are
// (inside a test file, jest's module loader cannot load them on Node 22).
import { startSandbox } from 'payments-sandbox/testing';

export default async function setup() {
  globalThis.sandbox = await startSandbox();
  process.env.SANDBOX_URL = globalThis.sandbox.url;
}
