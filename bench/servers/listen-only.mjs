// @ts-check
/**
 * The start suite's floor: a node:http server that only listens and answers every request
 * with an empty 200. Nothing else is imported, so its spawn → first answer is what a Node
 * process needs to boot and bind a port on this machine.
 *
 *   node bench/servers/listen-only.mjs --port <port>
 */
import { createServer } from 'node:http';

const port = Number(process.argv[process.argv.indexOf('--port') + 1]);
if (!Number.isInteger(port) || port <= 0) throw new Error('--port <port> is required');
createServer((_req, res) => res.end()).listen(port, '127.0.0.1');
