// @ts-check
/** Baseline 1: bare node:http, reads the request body and answers fixed JSON. */
import { createServer } from 'node:http';
import { FIXED_PRODUCT, portArg } from '../lib/fixed.mjs';

const body = Buffer.from(FIXED_PRODUCT);

const server = createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => {
    res.writeHead(req.method === 'POST' ? 201 : 200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': body.length,
    });
    res.end(body);
  });
});
server.keepAliveTimeout = 5000;
server.listen(portArg(process.argv), '127.0.0.1');
process.once('SIGTERM', () => server.close(() => process.exit(0)).closeAllConnections());
