// @ts-check
/**
 * Baseline 1: bare node:http, reads the request body and answers fixed JSON.
 *
 *   --reply product       (default) a product to every request (201 to POST, 200 otherwise)
 *   --reply transaction   a PENDING Pix purchase to POST (201), a filled one to GET (200),
 *                         a paid one to POST …/pay (200, as POST /_sandbox/transactions/:id/pay)
 *   --replies <file>      with --reply transaction: those three answers' texts (lib/fixed.mjs)
 */
import { createServer } from 'node:http';
import { FIXED_PRODUCT, portArg, stringArg, transactionReplies } from '../lib/fixed.mjs';

const reply = stringArg(process.argv, '--reply') ?? 'product';
if (reply !== 'product' && reply !== 'transaction') throw new Error('--reply must be product or transaction');
const replies = transactionReplies(process.argv);
const postBody = Buffer.from(reply === 'product' ? FIXED_PRODUCT : replies.purchase);
const getBody = Buffer.from(reply === 'product' ? FIXED_PRODUCT : replies.transaction);
const payBody = reply === 'product' ? undefined : Buffer.from(replies.paid);

const server = createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => {
    const post = req.method === 'POST';
    const pay = post && payBody !== undefined && req.url?.endsWith('/pay');
    const body = pay ? payBody : post ? postBody : getBody;
    res.writeHead(post && !pay ? 201 : 200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': body.length,
    });
    res.end(body);
  });
});
server.keepAliveTimeout = 5000;
server.listen(portArg(process.argv), '127.0.0.1');
process.once('SIGTERM', () => server.close(() => process.exit(0)).closeAllConnections());
