import { OpenAPIRouter } from 'openapi-backend';
import { beforeAll, describe, expect, it } from 'vitest';
import type { EndpointOptions } from '../../src/http/endpoint.js';
import { ENDPOINTS, endpointOptions } from '../../src/http/endpoints.js';
import { autopilotEndpoints } from '../../src/http/autopilot-handlers.js';
import { faultEndpoints } from '../../src/http/fault-handlers.js';
import { catalogEndpoints } from '../../src/http/handlers.js';
import { inspectorEndpoints } from '../../src/http/inspector-handlers.js';
import { rateLimitEndpoints } from '../../src/http/rate-limit-handlers.js';
import { transactionEndpoints } from '../../src/http/transaction-handlers.js';
import { usageEndpoints } from '../../src/http/usage-handlers.js';
import { webhookEndpoints } from '../../src/http/webhook-handlers.js';
import { withdrawalEndpoints } from '../../src/http/withdrawal-handlers.js';
import { pageEndpoints } from '../../src/pages/handlers.js';
import { loadOpenApi } from '../../src/spec/openapi.js';
import { TRANSITIONS } from '../../src/transactions/transitions.js';

/**
 * Every operation of openapi.yaml with what it runs under, in one table read from the handlers'
 * own tables (src/http/endpoint.ts): its route and key permission (openapi.yaml), whether it
 * commits in steps, whether it is an admin act, and what mock mode makes of it. The table below
 * is what they say today; a change to an endpoint's policy shows here as a changed line.
 */
const FAMILIES = {
  catalog: catalogEndpoints,
  transactions: transactionEndpoints,
  withdrawals: withdrawalEndpoints,
  pages: pageEndpoints,
  webhooks: webhookEndpoints,
  autopilot: autopilotEndpoints,
  faults: faultEndpoints,
  inspector: inspectorEndpoints,
  usage: usageEndpoints,
  rateLimit: rateLimitEndpoints,
};

const EXPECTED = `
operation                    route                                        permission          commits    admin act                        mock mode
listProducts                 GET /v2/products                             -                   in a unit  -                                -
createProduct                POST /v2/products                            isInvoiceAvailable  in a unit  -                                -
getProduct                   GET /v2/products/{id}                        -                   in a unit  -                                -
archiveProduct               DELETE /v2/products/{id}                     isInvoiceAvailable  in a unit  -                                -
updateProduct                PATCH /v2/products/{id}                      isInvoiceAvailable  in a unit  -                                -
uploadProductImage           POST /v2/products/{id}/image                 isInvoiceAvailable  own units  -                                -
deleteProductImage           DELETE /v2/products/{id}/image               isInvoiceAvailable  own units  -                                -
listProductOffers            GET /v2/products/{id}/offers                 -                   in a unit  -                                -
createOffer                  POST /v2/offers                              isInvoiceAvailable  in a unit  -                                -
createPurchase               POST /transactions/v2/purchase               createTransaction   in a unit  -                                -
getTransaction               GET /transactions/{id}                       -                   in a unit  -                                -
refundPurchase               POST /transactions/refund/{id}               -                   in a unit  -                                leaves REFUNDED/REFUNDED; 409 hint: refund from APPROVED
createCashOut                POST /withdraws/cash-out                     -                   in a unit  -                                refuses as the service: cashOutRefusal
getWithdrawal                GET /withdraws/collect/{id}                  -                   in a unit  -                                -
getBalance                   GET /users/balance                           -                   in a unit  -                                -
getHealth                    GET /_sandbox/health                         -                   own units  -                                -
createAccount                POST /_sandbox/accounts                      -                   in a unit  account creation                 -
setWebhookUrl                PUT /_sandbox/webhook-url                    -                   in a unit  -                                -
resetAccount                 POST /_sandbox/reset                         -                   own units  reset                            -
listTransactions             GET /_sandbox/transactions                   -                   in a unit  -                                -
fillTransaction              POST /_sandbox/transactions/{id}/fill        -                   in a unit  -                                leaves PENDING
payTransaction               POST /_sandbox/transactions/{id}/pay         -                   in a unit  -                                leaves APPROVED; 409 hint: pay from PENDING
expireTransaction            POST /_sandbox/transactions/{id}/expire      -                   in a unit  -                                leaves BLOCKED/EXPIRED; 409 hint: expire from PENDING
declineTransaction           POST /_sandbox/transactions/{id}/decline     -                   in a unit  -                                leaves BLOCKED/DECLINED; 409 hint: decline from PENDING
refundTransaction            POST /_sandbox/transactions/{id}/refund      -                   in a unit  -                                leaves REFUNDED/REFUNDED; 409 hint: refund from APPROVED
chargebackTransaction        POST /_sandbox/transactions/{id}/chargeback  -                   in a unit  -                                leaves CHARGEBACK/CHARGEBACK; 409 hint: chargeback from APPROVED
getPayerPages                GET /_sandbox/transactions/{id}/payer-pages  -                   in a unit  -                                -
getClock                     GET /_sandbox/clock                          -                   in a unit  -                                -
advanceClock                 POST /_sandbox/clock/advance                 -                   own units  -                                -
listWebhooks                 GET /_sandbox/webhooks                       -                   in a unit  -                                -
getWebhook                   GET /_sandbox/webhooks/{id}                  -                   in a unit  -                                -
replayWebhook                POST /_sandbox/webhooks/{id}/replay          -                   own units  -                                -
listEvents                   GET /_sandbox/events                         -                   in a unit  -                                -
getEventStream               GET /_sandbox/events/ws                      -                   in a unit  -                                -
getListenStream              GET /_sandbox/listen                         -                   in a unit  -                                -
listListeners                GET /_sandbox/listeners                      -                   own units  -                                -
getAutopilot                 GET /_sandbox/autopilot                      -                   in a unit  -                                -
setAutopilot                 PUT /_sandbox/autopilot                      -                   in a unit  -                                -
clearAutopilot               DELETE /_sandbox/autopilot                   -                   in a unit  -                                -
getSandboxAccount            GET /_sandbox/account                        -                   in a unit  -                                -
getRateLimit                 GET /_sandbox/rate-limit                     -                   in a unit  -                                -
setAccountRateLimit          PUT /_sandbox/accounts/{id}/rate-limit       -                   in a unit  setting an account's rate limit  -
getUsage                     GET /_sandbox/usage                          -                   in a unit  -                                -
listRequests                 GET /_sandbox/requests                       -                   in a unit  -                                -
listUnauthenticatedRequests  GET /_sandbox/requests/unauthenticated       -                   in a unit  the unauthenticated request log  -
getFaults                    GET /_sandbox/faults                         -                   in a unit  -                                -
setFaults                    PUT /_sandbox/faults                         -                   in a unit  -                                -
clearFaults                  DELETE /_sandbox/faults                      -                   in a unit  -                                -
creditBalance                POST /_sandbox/balance/credit                -                   in a unit  -                                -
listLedgerEntries            GET /_sandbox/balance/ledger                 -                   in a unit  -                                -
listWithdrawals              GET /_sandbox/withdrawals                    -                   in a unit  -                                -
getSandboxWithdrawal         GET /_sandbox/withdrawals/{id}               -                   in a unit  -                                -
approveWithdrawal            POST /_sandbox/withdrawals/{id}/approve      -                   in a unit  -                                leaves WITHDRAW_APPROVED
rejectWithdrawal             POST /_sandbox/withdrawals/{id}/reject       -                   in a unit  -                                leaves WITHDRAW_REJECTED (reject message)
failWithdrawal               POST /_sandbox/withdrawals/{id}/fail         -                   in a unit  -                                leaves WITHDRAW_ERROR (fail message)
returnWithdrawal             POST /_sandbox/withdrawals/{id}/return       -                   in a unit  -                                leaves WITHDRAW_RETURNED (return message)
getLimits                    GET /_sandbox/limits                         -                   in a unit  -                                -
setLimits                    PUT /_sandbox/limits                         -                   in a unit  -                                -
clearLimits                  DELETE /_sandbox/limits                      -                   in a unit  -                                -
getCheckoutPage              GET /_sandbox/checkout/{id}                  -                   in a unit  -                                -
approveCheckout              POST /_sandbox/checkout/{id}/approve         -                   in a unit  -                                -
rejectCheckout               POST /_sandbox/checkout/{id}/reject          -                   in a unit  -                                -
getBoletoPage                GET /_sandbox/boletos/{id}                   -                   in a unit  -                                -
approveBoleto                POST /_sandbox/boletos/{id}/approve          -                   in a unit  -                                -
rejectBoleto                 POST /_sandbox/boletos/{id}/reject           -                   in a unit  -                                -
getPixPage                   GET /_sandbox/pix/{id}                       -                   in a unit  -                                -
approvePix                   POST /_sandbox/pix/{id}/approve              -                   in a unit  -                                -
rejectPix                    POST /_sandbox/pix/{id}/reject               -                   in a unit  -                                -
getPixQr                     GET /_sandbox/pix/{id}/qr.png                -                   in a unit  -                                -
getSpeiPage                  GET /_sandbox/spei/{id}                      -                   in a unit  -                                -
approveSpei                  POST /_sandbox/spei/{id}/approve             -                   in a unit  -                                -
rejectSpei                   POST /_sandbox/spei/{id}/reject              -                   in a unit  -                                -
getObject                    GET /_sandbox/objects/{key}                  -                   in a unit  -                                -
`;

function mockOf(options: EndpointOptions): string {
  const mock = options.mock;
  if (!mock) return '-';
  const parts: string[] = [];
  if (mock.transaction) parts.push(`leaves ${mock.transaction.status}${mock.transaction.reason ? `/${mock.transaction.reason}` : ''}`);
  if (mock.withdrawal) parts.push(`leaves ${mock.withdrawal.status}${mock.withdrawal.ends ? ` (${mock.withdrawal.ends} message)` : ''}`);
  if (mock.conflict) parts.push(`409 hint: ${mock.conflict} from ${TRANSITIONS[mock.conflict].needs}`);
  if (mock.refusal) parts.push(`refuses as the service: ${mock.refusal.name}`);
  return parts.join('; ');
}

let operations: { id: string; route: string; permission: string }[];
beforeAll(async () => {
  operations = new OpenAPIRouter({ definition: await loadOpenApi() }).getOperations().map((operation) => ({
    id: operation.operationId ?? '',
    route: `${operation.method.toUpperCase()} ${operation.path}`,
    permission: 'x-permission' in operation && typeof operation['x-permission'] === 'string' ? operation['x-permission'] : '-',
  }));
});

describe('the endpoint table', () => {
  it('has exactly the operations of openapi.yaml, each in one family', () => {
    const families = Object.entries(FAMILIES).flatMap(([family, table]) => Object.keys(table).map((id) => `${id} (${family})`));
    const ids = families.map((entry) => entry.split(' ')[0]);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i), 'in two families').toEqual([]);
    expect([...ids].sort()).toEqual(operations.map((op) => op.id).sort());
    expect(Object.keys(ENDPOINTS).sort()).toEqual(operations.map((op) => op.id).sort());
  });

  it('lists each operation with its options, read from the handlers', () => {
    const options = endpointOptions();
    const rows = operations.map(({ id, route, permission }) => {
      const o = options[id as keyof typeof options] ?? {};
      return [id, route, permission, o.ownUnits === undefined ? 'in a unit' : 'own units', o.admin ?? '-', mockOf(o)];
    });
    const header = ['operation', 'route', 'permission', 'commits', 'admin act', 'mock mode'];
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
    const table = [header, ...rows].map((r) => r.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ').trimEnd()).join('\n');
    expect(`\n${table}\n`).toBe(EXPECTED);
  });

  it('says why each operation that commits in steps does so', () => {
    for (const [id, o] of Object.entries(endpointOptions())) if (o.ownUnits !== undefined) expect(o.ownUnits.length, id).toBeGreaterThan(20);
  });
});
