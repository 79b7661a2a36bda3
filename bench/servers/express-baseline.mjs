// @ts-check
/**
 * Baseline 2: express 5 with express.json(), answering fixed JSON (no validation, no store).
 *
 *   --reply product       (default) POST /v2/products: a product (201)
 *   --reply transaction   POST /transactions/v2/purchase: a PENDING Pix purchase (201);
 *                         GET /transactions/:id: a filled one (200)
 *   --replies <file>      with --reply transaction: the answers' texts (lib/fixed.mjs)
 */
import express from 'express';
import { FIXED_PRODUCT, portArg, stringArg, transactionReplies } from '../lib/fixed.mjs';

const reply = stringArg(process.argv, '--reply') ?? 'product';
if (reply !== 'product' && reply !== 'transaction') throw new Error('--reply must be product or transaction');

const product = JSON.parse(FIXED_PRODUCT);
const replies = transactionReplies(process.argv);
const purchase = JSON.parse(replies.purchase);
const transaction = JSON.parse(replies.transaction);

const app = express();
app.disable('x-powered-by');
app.set('etag', false);
app.use(express.json({ limit: 1024 * 1024 }));
app.get('/_sandbox/health', (_req, res) => {
  res.json({ status: 'ok' });
});
if (reply === 'product') {
  app.post('/v2/products', (req, res) => {
    if (typeof req.body?.name !== 'string') {
      res.status(400).json({ error: 'name is required' });
      return;
    }
    res.status(201).json(product);
  });
} else {
  app.post('/transactions/v2/purchase', (req, res) => {
    if (typeof req.body?.name !== 'string') {
      res.status(400).json({ error: 'name is required' });
      return;
    }
    res.status(201).json(purchase);
  });
  app.get('/transactions/:id', (_req, res) => {
    res.json(transaction);
  });
}

const server = app.listen(portArg(process.argv), '127.0.0.1');
server.keepAliveTimeout = 5000;
process.once('SIGTERM', () => server.close(() => process.exit(0)).closeAllConnections());
