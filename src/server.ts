import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSandbox, type Sandbox } from './app.js';
import type { Config } from './config.js';
import type { Logger } from './log.js';

export interface RunningSandbox {
  sandbox: Sandbox;
  server: Server;
  url: string;
  /** Stops accepting, lets in-flight requests finish, flushes the store. Idempotent. */
  stop(): Promise<void>;
}

export async function startServer(config: Config, logger: Logger): Promise<RunningSandbox> {
  const sandbox = await createSandbox(config, logger);
  const server = sandbox.createServer().listen(config.port, config.host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  // Longer than the idle timeout of clients' connection pools (undici 4 s, agentkeepalive
  // 4-15 s, load balancers 60 s): a server closing an idle socket first races the client's
  // next request on it, which then fails with ECONNRESET. Shutdown closes idle sockets itself.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  const { port } = server.address() as AddressInfo;
  const url = `http://${config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host}:${port}`;
  sandbox.setPublicUrl(`http://localhost:${port}`);
  sandbox.attachEventStream(server);

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // close() only ends the sockets idle right now: a keep-alive socket whose request is
      // still in flight would stay open for keepAliveTimeout after its answer.
      const sweep = setInterval(() => server.closeIdleConnections(), 50);
      server.closeIdleConnections();
      sandbox.closeStreams();
      await closed;
      clearInterval(sweep);
      await sandbox.close();
    })());
  return { sandbox, server, url, stop };
}
