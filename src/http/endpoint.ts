import type { MockAnswer } from '../mock/answer.js';
import type { OperationId } from '../spec/types.js';
import type { Call, Handler, JsonReply, Reply } from './call.js';

/**
 * An endpoint is its operation in openapi.yaml (path, schemas, statuses, `x-permission`,
 * `x-message`s), and here its handler with the policy it runs under, written side by side in
 * its family's table (`satisfies EndpointTable<Services>`), so that no list kept elsewhere has
 * to be told of a new one. src/http/endpoints.ts gathers the tables and checks every operation
 * of openapi.yaml has exactly one.
 */
export interface EndpointOptions {
  /**
   * The operation commits in steps, each durable before the next, so its services run units of
   * their own and its call's unit refuses use; the text says why. Without it the handler runs
   * as one unit of work, durable before the answer leaves.
   */
  readonly ownUnits?: string;
  /**
   * An admin act, named as the refusal names it: on a sandbox bound beyond loopback without an
   * admin token it is closed (403) before the handler runs; with a token the handler decides
   * what the token lets through.
   */
  readonly admin?: string;
  /** What mock mode makes of this operation's answer beyond what openapi.yaml says (src/mock/answer.ts). */
  readonly mock?: MockAnswer;
}

export interface Endpoint<K extends OperationId, S> extends EndpointOptions {
  /** Gets the call typed from openapi.yaml, and the services of its family. */
  readonly handle: (call: Call<K>, services: S) => Reply<K> | Promise<Reply<K>>;
}

/** A family's endpoints, keyed by operationId: `{ … } satisfies EndpointTable<FamilyServices>`. */
export type EndpointTable<S> = { readonly [K in OperationId]?: Endpoint<K, S> };

/** An endpoint whose handler has its services: what the pipeline runs. */
export interface BoundEndpoint<K extends OperationId> extends EndpointOptions {
  readonly handle: Handler<K>;
}

export type Endpoints = { [K in OperationId]?: BoundEndpoint<K> };

/** A JSON answer, its status kept literal so that the operation's Reply type can check it. */
export const json = <S extends number, J>(status: S, body: J): JsonReply<S, J> => ({ status, json: body });

/** The table's endpoints, each handler given the services. */
export function bindEndpoints<S>(table: EndpointTable<S>, services: S): Endpoints {
  const bound: Endpoints = {};
  // Object.keys types its keys as strings; the table's type admits operationIds only.
  for (const id of Object.keys(table) as OperationId[]) bindOne(bound, table, id, services);
  return bound;
}

function bindOne<K extends OperationId, S>(into: Endpoints, table: EndpointTable<S>, id: K, services: S): void {
  const endpoint: Endpoint<K, S> | undefined = table[id];
  if (endpoint === undefined) return;
  const { handle, ...options } = endpoint;
  const bound: BoundEndpoint<K> = { ...options, handle: (call) => handle(call, services) };
  // A write through a generic key: the signature ties `id` and `bound` to one K, which TypeScript cannot follow into the mapped type.
  (into as Partial<Record<K, BoundEndpoint<K>>>)[id] = bound;
}

/** The options of each endpoint of a table, without its handler: what the endpoint table test lists. */
export function optionsOf<S>(table: EndpointTable<S>): { [K in OperationId]?: EndpointOptions } {
  return Object.fromEntries(
    Object.entries(table).map(([id, endpoint]: [string, EndpointOptions]) => {
      const { ownUnits, admin, mock } = endpoint;
      return [id, { ...(ownUnits !== undefined && { ownUnits }), ...(admin !== undefined && { admin }), ...(mock !== undefined && { mock }) }];
    }),
  );
}
