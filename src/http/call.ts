import type { ApiRequest } from './request.js';
import type { AccountRecord } from '../accounts/accounts.js';
import type { operations } from '../spec/openapi-types.js';
import type { OperationId } from '../spec/types.js';
import type { Reads, Unit } from '../store/ports.js';
import { HttpError } from './errors.js';

/**
 * The handler boundary, typed from openapi.yaml (`npm run generate:types` →
 * src/spec/openapi-types.ts): `Handler<'createPurchase'>` gets the operation's path
 * parameters, query and body as validation left them, and may only answer a status the
 * operation documents, with that status's body.
 */

type Op<K extends OperationId> = operations[K];
type Nothing = Record<string, never>;
/** `never` (the generator's "no such part") as an empty object. */
type OrNothing<T> = [T] extends [never] ? Nothing : T;

export type PathParams<K extends OperationId> = OrNothing<NonNullable<Op<K>['parameters']['path']>>;
export type QueryParams<K extends OperationId> = OrNothing<NonNullable<Op<K>['parameters']['query']>>;

type JsonOf<C> = C extends { 'application/json': infer J } ? J : never;
type BodyOf<R> = [R] extends [never] ? undefined
  : R extends { content: infer C } ? ([JsonOf<C>] extends [never] ? Nothing : JsonOf<C>) : undefined;
/** The JSON body (undefined when the operation takes none, or when an optional one was not sent); multipart uploads are read by their handler from the request. */
export type RequestBody<K extends OperationId> =
  undefined extends Op<K>['requestBody'] ? BodyOf<NonNullable<Op<K>['requestBody']>> | undefined : BodyOf<Op<K>['requestBody']>;

/** Headers a reply adds to the answer. */
interface WithHeaders {
  headers?: Record<string, string>;
}
export type JsonReply<S extends number, J> = { status: S; json: J } & WithHeaders;
export type BytesReply<S extends number> = { status: S; bytes: Buffer | string; contentType: string } & WithHeaders;
export type RedirectReply = { status: 303; redirect: string } & WithHeaders;

type ReplyAt<S extends number, R> = R extends { content: infer C }
  ? ([JsonOf<C>] extends [never] ? never : JsonReply<S, JsonOf<C>>) | (Exclude<keyof C, 'application/json'> extends never ? never : BytesReply<S>)
  : S extends 303 ? RedirectReply : never;
type Responses<K extends OperationId> = Op<K>['responses'];

/** What a handler may answer: any status the operation documents, with that status's content. */
export type Reply<K extends OperationId> = { [S in keyof Responses<K>]: S extends number ? ReplyAt<S, Responses<K>[S]> : never }[keyof Responses<K>];

/** What a handler sees: the authenticated caller, the validated, coerced request, and its unit of work. */
export interface Call<K extends OperationId> {
  req: ApiRequest;
  account: AccountRecord | undefined;
  /** The request carried the sandbox's admin token. */
  admin: boolean;
  /**
   * The request's unit of work: what the handler changes goes through it, and is durable before
   * the answer leaves. Operations that commit in steps (their endpoint's `ownUnits`) run units
   * of their own and get one that refuses use.
   */
  unit: Unit;
  /**
   * Where the handler reads: its unit (reads that see what the handler wrote), or for an
   * operation that commits in steps, the committed state.
   */
  reads: Reads;
  params: PathParams<K>;
  query: QueryParams<K>;
  body: RequestBody<K>;
}

export type Handler<K extends OperationId> = (call: Call<K>) => Reply<K> | Promise<Reply<K>>;

/** A reply of any operation: what the pipeline sends, and what the schema-generated mock answers. */
export type AnyReply = (JsonReply<number, unknown> | BytesReply<number> | RedirectReply);

/** A call as the pipeline builds it before it knows which operation's types apply. */
export interface AnyCall {
  req: ApiRequest;
  account: AccountRecord | undefined;
  admin: boolean;
  unit: Unit;
  reads: Reads;
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: unknown;
}

/** The caller's account; operations with a security requirement always have one. */
export function owner(call: { account: AccountRecord | undefined }): AccountRecord {
  if (!call.account) throw new HttpError(401, 'API key invalid or absent');
  return call.account;
}
