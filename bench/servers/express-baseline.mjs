// @ts-check
/** Baseline 2: express 5 with express.json(), answering fixed JSON (no validation, no store). */
import express from 'express';
import { FIXED_PRODUCT, portArg } from '../lib/fixed.mjs';

const product = JSON.parse(FIXED_PRODUCT);

const app = express();
app.disable('x-powered-by');
app.set('etag', false);
app.use(express.json({ limit: 1024 * 1024 }));
app.get('/_sandbox/health', (_req, res) => {
  res.json({ status: 'ok' });
});
app.post('/v2/products', (req, res) => {
  if (typeof req.body?.name !== 'string') {
    res.status(400).json({ error: 'name is required' });
    return;
  }
  res.status(201).json(product);
});

const server = app.listen(portArg(process.argv), '127.0.0.1');
server.keepAliveTimeout = 5000;
process.once('SIGTERM', () => server.close(() => process.exit(0)).closeAllConnections());
