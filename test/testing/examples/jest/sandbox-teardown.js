// sandbox-teardown.js
export default async function teardown() {
  await globalThis.sandbox.stop();
}
