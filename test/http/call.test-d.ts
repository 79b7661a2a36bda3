import { describe, expectTypeOf, it } from 'vitest';
import type { Call, Handler, PathParams, QueryParams, Reply, RequestBody } from '../../src/http/call.js';
import { bindEndpoints, type BoundEndpoint, type EndpointTable, type Endpoints } from '../../src/http/endpoint.js';
import type { AutopilotRules, PurchaseRequest, Transaction, WithdrawalStatus } from '../../src/spec/types.js';

/**
 * src/http/call.ts: a handler's call and reply are typed from openapi.yaml's generated
 * `operations`. Checked by the type checker (vitest's typecheck, part of `npm test`).
 */
describe('Handler<K>', () => {
  it('gives the body the operation takes', () => {
    expectTypeOf<Call<'createPurchase'>['body']>().toEqualTypeOf<PurchaseRequest>();
    expectTypeOf<RequestBody<'setAutopilot'>>().toEqualTypeOf<AutopilotRules>();
    // An optional body may be absent; an operation without one gets undefined.
    expectTypeOf<RequestBody<'payTransaction'>>().toExtend<object | undefined>();
    expectTypeOf<undefined>().toExtend<RequestBody<'payTransaction'>>();
    expectTypeOf<RequestBody<'getTransaction'>>().toEqualTypeOf<undefined>();
  });

  it('gives path and query parameters their schema types, and nothing where the operation has none', () => {
    expectTypeOf<PathParams<'getTransaction'>>().toEqualTypeOf<{ id: string }>();
    expectTypeOf<QueryParams<'getTransaction'>>().toEqualTypeOf<{ searchBy?: 'id' | 'externalId' }>();
    expectTypeOf<QueryParams<'listProducts'>['limit']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<QueryParams<'listWithdrawals'>['status']>().toEqualTypeOf<WithdrawalStatus | undefined>();
    expectTypeOf<PathParams<'createPurchase'>>().toEqualTypeOf<Record<string, never>>();
  });

  it('lets a handler answer only a documented status, with that status\'s body', () => {
    expectTypeOf<{ status: 201; json: Transaction }>().toExtend<Reply<'createPurchase'>>();
    expectTypeOf<{ status: 200; json: Transaction }>().not.toExtend<Reply<'createPurchase'>>();
    expectTypeOf<{ status: 201; json: { id: string } }>().not.toExtend<Reply<'createPurchase'>>();
    // An HTML page and a redirect where the spec documents them.
    expectTypeOf<{ status: 200; bytes: string; contentType: string }>().toExtend<Reply<'getCheckoutPage'>>();
    expectTypeOf<{ status: 303; redirect: string }>().toExtend<Reply<'approveCheckout'>>();
    expectTypeOf<{ status: 303; redirect: string }>().not.toExtend<Reply<'getCheckoutPage'>>();
  });

  it('types a whole handler from its operation id', () => {
    const purchase: Handler<'createPurchase'> = (call) => {
      expectTypeOf(call.body.amount).toEqualTypeOf<PurchaseRequest['amount']>();
      expectTypeOf(call.params).toEqualTypeOf<Record<string, never>>();
      return { status: 201, json: {} as Transaction };
    };
    const endpoints: Endpoints = { createPurchase: { handle: purchase } };
    expectTypeOf(endpoints.createPurchase?.handle).toEqualTypeOf<Handler<'createPurchase'> | undefined>();
    // @ts-expect-error getTransaction's call has no body to read an amount from
    const lookup: Handler<'getTransaction'> = (call) => ({ status: 200, json: { amount: call.body.amount } as unknown as Transaction });
    void lookup;
  });

  it('types a family table by operation id: its calls, its services, and its names', () => {
    const table = {
      createPurchase: {
        ownUnits: 'why it commits in steps',
        handle: (call, s) => {
          expectTypeOf(call.body.amount).toEqualTypeOf<PurchaseRequest['amount']>();
          expectTypeOf(s).toEqualTypeOf<{ tag: string }>();
          return { status: 201, json: {} as Transaction };
        },
      },
    } satisfies EndpointTable<{ tag: string }>;
    expectTypeOf(bindEndpoints(table, { tag: 't' }).createPurchase).toEqualTypeOf<BoundEndpoint<'createPurchase'> | undefined>();
    // @ts-expect-error a name that is no operation of openapi.yaml
    const misspelt = { createPurchases: { handle: () => ({ status: 201, json: {} as Transaction }) } } satisfies EndpointTable<unknown>;
    void misspelt;
    // @ts-expect-error a status createPurchase does not document
    const undocumented = { createPurchase: { handle: () => ({ status: 202, json: {} as Transaction }) } } satisfies EndpointTable<unknown>;
    void undocumented;
  });
});
