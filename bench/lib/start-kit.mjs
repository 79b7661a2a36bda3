// @ts-check
/**
 * One fresh start of the test kit, measured from inside the process that runs it (the start
 * suite, issue 46): `startSandbox()` as a test file calls it, its own process start excluded.
 * The clock starts right before the kit's module is imported, so Node's own boot (which the
 * floor, a node:http server's spawn → first answer, already contains) is not counted twice.
 *
 *   node bench/lib/start-kit.mjs <path of dist/testing/index.js>
 *
 * Prints one JSON line: importMs (the import of payments-sandbox/testing), startSandboxMs
 * (the call to resolved: the server's modules, the spec, the store, the listen, the kit's
 * own account), readyMs (their sum), cpuSec and rssMiB (the process's CPU over those, all
 * threads, and its resident size at resolved), account1Ms and account2Ms (the first and second
 * `account()` after it), bootMs (the process's time before the import: not counted), stopMs,
 * processCpuSec (the process's CPU from its start to the end: what the bench subtracts from the
 * machine's to tell what other processes used); after those, cycle1Ms (a webhook cycle on the
 * first account: the app's purchase, the kit's pay, the `cashin.paid` taken by waitFor; an
 * account's listener connects at its first such call, so it holds the process's first listener
 * connection) and laterTestMs (what a later test pays: an account() and its webhook cycle).
 */
import { pathToFileURL } from 'node:url';
import { PIX_BODY } from './pix-body.mjs';

const entry = process.argv[2];
if (!entry) throw new Error('usage: start-kit.mjs <dist/testing/index.js>');

const bootMs = performance.now();
const cpu0 = process.cpuUsage();
const t0 = performance.now();
/**
 * @typedef {{ url: string, authorization: string, control: { pay: (id: string) => Promise<unknown> }, webhooks: { waitFor: (match: unknown) => Promise<unknown> } }} Account
 * @type {{ startSandbox: () => Promise<{ account: () => Promise<Account>, stop: () => Promise<void> }> }} the part of payments-sandbox/testing used here
 */
const kit = await import(pathToFileURL(entry).href);
const t1 = performance.now();
const sandbox = await kit.startSandbox();
const t2 = performance.now();
const cpu = process.cpuUsage(cpu0);
const rssMiB = process.memoryUsage.rss() / 2 ** 20;
const first = await sandbox.account();
const t3 = performance.now();
await sandbox.account();
const t4 = performance.now();
const cycle1Ms = await cycle(first);
// What a later test of the file pays, once a listener of the kit has connected: its account() and its webhook cycle.
const t6 = performance.now();
await cycle(await sandbox.account());
const laterTestMs = performance.now() - t6;
const t7 = performance.now();
await sandbox.stop();
const t5 = performance.now();

process.stdout.write(
  `${JSON.stringify({ bootMs, importMs: t1 - t0, startSandboxMs: t2 - t1, readyMs: t2 - t0, account1Ms: t3 - t2, account2Ms: t4 - t3, cycle1Ms, laterTestMs, stopMs: t5 - t7, cpuSec: (cpu.user + cpu.system) / 1e6, rssMiB, processCpuSec: (process.cpuUsage().user + process.cpuUsage().system) / 1e6 })}\n`,
);

/**
 * The app under test's purchase (node:http, as an app's client would call), the kit's pay, the
 * purchase's `cashin.paid` taken by the kit: ms from the purchase to the webhook.
 * @param {Account} account
 */
async function cycle(account) {
  const started = performance.now();
  // Not imported at the top: the kit's import loads node:http, and is timed with it.
  const { request } = await import('node:http');
  const created = await new Promise((resolve, reject) => {
    const req = request(new URL('/transactions/v2/purchase', account.url), { method: 'POST', headers: { authorization: account.authorization, 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk) => (text += chunk));
      res.on('end', () => (res.statusCode === 201 ? resolve(JSON.parse(text)) : reject(new Error(`purchase: ${res.statusCode} ${text}`))));
    });
    req.on('error', reject);
    req.end(JSON.stringify(PIX_BODY));
  });
  const id = /** @type {{ id: string }} */ (created).id;
  await account.control.pay(id);
  await account.webhooks.waitFor({ event: 'cashin.paid', payload: { transaction_id: id } });
  return performance.now() - started;
}
// Whatever the stopped sandbox left scheduled must not keep this measurement's process alive.
process.exit(0);
