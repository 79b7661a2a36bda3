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
 * machine's to tell what other processes used).
 */
import { pathToFileURL } from 'node:url';

const entry = process.argv[2];
if (!entry) throw new Error('usage: start-kit.mjs <dist/testing/index.js>');

const bootMs = performance.now();
const cpu0 = process.cpuUsage();
const t0 = performance.now();
/** @type {{ startSandbox: () => Promise<{ account: () => Promise<unknown>, stop: () => Promise<void> }> }} the part of payments-sandbox/testing used here */
const kit = await import(pathToFileURL(entry).href);
const t1 = performance.now();
const sandbox = await kit.startSandbox();
const t2 = performance.now();
const cpu = process.cpuUsage(cpu0);
const rssMiB = process.memoryUsage.rss() / 2 ** 20;
await sandbox.account();
const t3 = performance.now();
await sandbox.account();
const t4 = performance.now();
await sandbox.stop();
const t5 = performance.now();

process.stdout.write(
  `${JSON.stringify({ bootMs, importMs: t1 - t0, startSandboxMs: t2 - t1, readyMs: t2 - t0, account1Ms: t3 - t2, account2Ms: t4 - t3, stopMs: t5 - t4, cpuSec: (cpu.user + cpu.system) / 1e6, rssMiB, processCpuSec: (process.cpuUsage().user + process.cpuUsage().system) / 1e6 })}\n`,
);
// Whatever the stopped sandbox left scheduled must not keep this measurement's process alive.
process.exit(0);
