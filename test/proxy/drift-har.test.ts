import { describe, expect, it } from 'vitest';
import { HarError, parseHar } from '../../src/proxy/drift-har.js';

const entry = (overrides: Record<string, unknown> = {}) => ({
  request: { method: 'post', url: 'https://api.example.com/transactions/v2/purchase?x=1', headers: [{ name: 'Authorization', value: 'Basic ****' }], postData: { mimeType: 'application/json', text: '{"amount":100}' } },
  response: { status: 201, content: { mimeType: 'application/json', text: Buffer.from('{"id":"1"}').toString('base64'), encoding: 'base64' } },
  ...overrides,
});

describe('reading a HAR for a replay', () => {
  it('reads each entry: method, path, query, JSON bodies (base64 content decoded), credentials sent, webhook flag', () => {
    const [purchase, webhook] = parseHar(JSON.stringify({ log: { entries: [entry(), entry({ _webhook: true, request: { method: 'POST', url: 'http://127.0.0.1:4020/_proxy/webhooks', headers: [] } })] } }));
    expect(purchase).toEqual({ entry: 1, method: 'POST', path: '/transactions/v2/purchase', query: [['x', '1']], body: { amount: 100 }, status: 201, response: { id: '1' }, authorized: true, webhook: false });
    expect([webhook?.entry, webhook?.webhook, webhook?.authorized, webhook?.body]).toEqual([2, true, false, undefined]);
  });

  it('says in one line what is wrong with a file that is no HAR', () => {
    expect(() => parseHar('{"log": {', 's.har')).toThrow(HarError);
    expect(() => parseHar('{"log": {', 's.har')).toThrow(/^s\.har is not JSON \(.+\): a HAR file is one JSON object$/);
    expect(() => parseHar('{"entries": []}', 's.har')).toThrow(/^s\.har is no HAR log/);
    expect(() => parseHar(JSON.stringify({ log: { entries: [entry({ request: { method: 'GET', url: '/relative' } })] } }), 's.har')).toThrow('s.har: entry 1: request.method and an absolute request.url are required');
    expect(() => parseHar(JSON.stringify({ log: { entries: [entry({ response: { status: '201' } })] } }), 's.har')).toThrow('s.har: entry 1: response.status must be an integer');
  });
});
