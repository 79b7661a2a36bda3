import { rename, rm, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { createSandbox, type Sandbox, type SandboxOptions } from './app.js';
import { serveHttp } from './http/transport.js';
import type { Config } from './config.js';
import type { Logger } from './log.js';

export interface RunningSandbox {
  sandbox: Sandbox;
  server: Server;
  url: string;
  /** Stops accepting, lets in-flight requests finish, flushes the store. Idempotent. */
  stop(): Promise<void>;
}

export async function startServer(config: Config, logger: Logger, options: SandboxOptions = {}): Promise<RunningSandbox> {
  const sandbox = await createSandbox(config, logger, options);
  const server = serveHttp(sandbox).listen(config.port, config.host);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('listening', resolve);
      server.once('error', reject);
    });
  } catch (error) {
    // Not started: the data file is left as a clean stop leaves it (no lock, no journal), so the
    // next start, on another port, is not refused for a lock this process held.
    await sandbox.close();
    throw await listenError(error, config);
  }
  // Longer than the idle timeout of clients' connection pools (undici 4 s, agentkeepalive
  // 4-15 s, load balancers 60 s): a server closing an idle socket first races the client's
  // next request on it, which then fails with ECONNRESET. Shutdown closes idle sockets itself.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  // A backstop only: the transport answers a body past the request timeout with a 408 in its
  // endpoint's shape, counted from its headers; node counts from the request's first byte.
  server.requestTimeout = server.headersTimeout + config.requestTimeoutMs + 1_000;
  const { port } = server.address() as AddressInfo;
  const url = `http://${config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host}:${port}`;
  sandbox.setPublicUrl(`http://localhost:${port}`);
  // For a health check run beside the process: reachable from this machine, whatever the bind address.
  if (config.urlFile) {
    // Whole or not there: a health check reading it while it is written must not read an empty URL.
    const partial = `${config.urlFile}.${process.pid}.tmp`;
    await writeFile(partial, `http://${loopbackFor(config.host)}:${port}\n`);
    await rename(partial, config.urlFile);
  }

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // close() only ends the sockets idle right now: a keep-alive socket whose request is
      // still in flight would stay open for keepAliveTimeout after its answer.
      const sweep = setInterval(() => server.closeIdleConnections(), 50);
      server.closeIdleConnections();
      await sandbox.close(
        closed.then(async () => {
          clearInterval(sweep);
          if (config.urlFile) await rm(config.urlFile, { force: true });
        }),
      );
    })());
  return { sandbox, server, url, stop };
}

/** Where a process on this machine reaches a server bound to `host`. */
function loopbackFor(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

/** Why the port could not be had, and what to do about it, instead of Node's bare `listen EADDRINUSE`. */
async function listenError(error: unknown, config: Config): Promise<Error> {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EADDRINUSE') {
    const taken = `port ${config.port} on ${config.host} is already in use (another payments-sandbox, or another program): stop it, or start on another port`;
    // A suggestion tried first: the next port is often the neighbour's (a second sandbox, a dev server).
    const free = await freePortAfter(config.host, config.port);
    const anyPort = '--port 0 for any free one (the banner prints the URL)';
    return new Error(free === undefined ? `${taken}: ${anyPort}` : `${taken}: --port ${free} (free just now; or PORT=${free}), or ${anyPort}`);
  }
  if (code === 'EACCES') return new Error(`port ${config.port} needs privileges this user lacks: start on a port above 1023, e.g. --port 4010`);
  if (code === 'EADDRNOTAVAIL') return new Error(`${config.host} is not an address of this machine: start with --host 127.0.0.1 (or 0.0.0.0 for every interface)`);
  return error instanceof Error ? error : new Error(String(error));
}

/** How many ports after a taken one are tried for a suggestion. */
const PORTS_TRIED = 20;

/**
 * The first port after `port` (wrapping past 65535 to 1024) that could be bound on `host` just
 * now, found by binding it and letting it go; undefined when none of the next PORTS_TRIED is.
 */
export async function freePortAfter(host: string, port: number): Promise<number | undefined> {
  for (let i = 1; i <= PORTS_TRIED; i++) {
    const candidate = port + i > 65_535 ? 1023 + (port + i - 65_535) : port + i;
    if (await canBind(host, candidate)) return candidate;
  }
  return undefined;
}

function canBind(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createNetServer();
    probe.once('error', () => resolve(false));
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve(true)));
  });
}
