/**
 * On Node 22, AsyncLocalStorage (which the store's units of work ride on) is built on promise
 * hooks that tax every promise: measured, a GET's CPU more than doubled. Node 24 carries async
 * context in a frame instead (AsyncContextFrame, its default); Node 22 has the same under
 * `--experimental-async-context-frame`. So a sandbox started on Node 22 without it replaces
 * itself (execve: the same process id, so signals, the data file's lock and `kill -9` mean what
 * they meant) with the same command plus that flag. SANDBOX_ASYNC_CONTEXT_FRAME=off keeps it
 * as started. Node 24 rejects the flag: there, nothing happens.
 */
const FLAG = '--experimental-async-context-frame';
const major = Number(process.versions.node.split('.')[0]);
const execve: ((file: string, args: string[], env: NodeJS.ProcessEnv) => never) | undefined =
  typeof Reflect.get(process, 'execve') === 'function' ? (Reflect.get(process, 'execve') as (file: string, args: string[], env: NodeJS.ProcessEnv) => never).bind(process) : undefined;

if (major === 22 && execve && process.platform !== 'win32' && !process.execArgv.includes(FLAG) && process.env.SANDBOX_ASYNC_CONTEXT_FRAME !== 'off') {
  // The ExperimentalWarning execve emits is printed on a later tick, which never comes.
  execve(process.execPath, [process.execPath, FLAG, ...process.execArgv, ...process.argv.slice(1)], process.env);
}
