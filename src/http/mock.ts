import type { ValidateFunction } from 'ajv';
import { generateSync, type GenerateOptions, type JsonSchema, type Random } from 'json-schema-faker';
import type { Operation } from 'openapi-backend';
import type { OpenAPIV3_1 } from 'openapi-types';
import { errorBody, familyOf, sizeOf } from './errors.js';
import type { AnyReply as Reply } from './call.js';
import { headerText } from './reply.js';
import { createAjv } from './validator.js';
import { seededRng } from '../rails/random.js';
import { TRANSACTION_NOT_FOUND } from '../transactions/transactions.js';
import { coherent, type MockRequest } from '../mock/coherent.js';
import { preferredStatus } from '../mock/prefer.js';
import { seedFor } from '../mock/seed.js';
import { withdrawalRefusal } from '../mock/withdrawal.js';
import type { ApiRequest } from './request.js';

type ResponseObject = OpenAPIV3_1.ResponseObject;
type SchemaObject = OpenAPIV3_1.SchemaObject;

/** Marks every generated response, so a stateful sandbox's fallback answers are told from real ones. */
export const MOCK_HEADER = 'x-sandbox-mock';

/** Attempts (each with its own derived seed) before a schema is declared ungeneratable. */
const MAX_ATTEMPTS = 20;

const DAY_S = 86_400;
const FROM = Date.UTC(2024, 0, 1);

const GENERATE: GenerateOptions = {
  // The webhook list nests its payload's payer eight levels down; at json-schema-faker's
  // default depth (5) deeper strings come out empty and break their patterns.
  maxDepth: 12,
  // Every documented field, as a client would see in a full response; it also keeps the
  // autopilot rules' "one of contains/startsWith/equals" objects generatable.
  alwaysFakeOptionals: true,
  // A schema's own examples and defaults are what the spec's author meant a client to see.
  useExamplesValue: true,
  useDefaultValue: true,
  formats: {
    // The sandbox's own timestamp form (UTC, milliseconds), in 2024–2026.
    'date-time': (random: Random) => new Date(FROM + random.int(0, 3 * 365 * DAY_S) * 1000 + random.int(0, 999)).toISOString(),
  },
};

/** Schemas compiled once per schema object, per responder (src/http keeps no module-level state). */
class SchemaValidators {
  private ajv: ReturnType<typeof createAjv> | undefined;
  private readonly compiled = new WeakMap<object, ValidateFunction>();

  of(schema: SchemaObject): ValidateFunction {
    let validate = this.compiled.get(schema);
    if (!validate) {
      // Built on first use: a stateful sandbox whose operations all have handlers never needs it.
      this.ajv ??= createAjv({});
      validate = this.ajv.compile(schema);
      this.compiled.set(schema, validate);
    }
    return validate;
  }
}

/** A 1×1 transparent PNG: binary image responses carry a real image of the documented type. */
const PNG_1X1 = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

export interface MockResponderOptions {
  seed: number;
}

/**
 * Answers an operation from openapi.yaml alone, like Prism's dynamic mode: its first
 * documented 2xx (201 for creates), or the status a `Prefer: code=NNN` header asks for when
 * the operation documents it, with a body json-schema-faker generates from the dereferenced
 * schema. Each body is seeded by (seed, operationId, status) and checked against its schema
 * before use (another derived seed is tried if it does not match), so a given seed always
 * gives the same, valid, response. Nothing is read from or written to the store.
 */
export class MockResponder {
  private readonly seed: number;
  private readonly bodies = new Map<string, unknown>();
  /** Bounded by the operations × statuses × attempts of openapi.yaml. */
  private readonly raw = new Map<string, unknown>();
  private readonly validators = new SchemaValidators();

  constructor(options: MockResponderOptions) {
    this.seed = options.seed;
  }

  respond(operation: Operation, req: Pick<ApiRequest, 'headers' | 'path'> & Partial<Pick<ApiRequest, 'body' | 'query'>>): Reply {
    const operationId = operation.operationId ?? `${operation.method} ${operation.path}`;
    const request: MockRequest = { params: pathParams(operation.path, req.path), query: (req.query ?? {}) as Record<string, unknown>, body: req.body as unknown };
    const responses = (operation.responses ?? {}) as Record<string, ResponseObject>;
    const preferred = preferredStatus(req.headers.prefer);
    const honoured = preferred !== undefined && preferred >= 200 && responses[String(preferred)] !== undefined;
    const status = honoured ? preferred : defaultStatus(responses);
    if (status === undefined) throw new Error(`${operationId} documents no response the mock can send`);
    const headers: Record<string, string> = { [MOCK_HEADER]: `seed=${this.seed}` };
    // RFC 7240: a preference the server cannot apply is ignored; applied ones are named.
    if (honoured) headers['preference-applied'] = `code=${status}`;
    // What the service refuses whatever its state (a key that does not fit its type), the mock refuses too, unless a status was asked for.
    const refusal = honoured ? undefined : withdrawalRefusal(operationId, request);
    if (refusal) return { status: refusal.status, json: errorBody(familyOf(req.path), refusal.status, refusal.message), headers: { ...headers, 'x-sandbox-hint': headerText(refusal.hint) } };
    const response = responses[String(status)] ?? { description: '' };
    const content = response.content ?? {};
    const json = content['application/json'];
    if (json && status >= 400) {
      // The error the real endpoint answers, in its family's shape: what a client matches on.
      const hint = errorHint(operationId, status, request.params);
      if (hint !== undefined) headers['x-sandbox-hint'] = headerText(hint);
      return { status, json: errorBody(familyOf(req.path), status, errorMessage(operationId, status, request.params)), headers };
    }
    if (json) {
      return { status, json: json.schema ? this.body(operationId, status, json.schema as SchemaObject, exampleOf(json), request) : null, headers };
    }
    if (status >= 300 && status < 400) {
      const location = this.location(operationId, status, response, req.path);
      if (status === 303) return { status, redirect: location, headers };
      return { status, bytes: '', contentType: 'text/plain', headers: { ...headers, location } };
    }
    const [mediaType, media] = Object.entries(content)[0] ?? [];
    if (!mediaType) return { status, bytes: '', contentType: 'text/plain', headers };
    if (mediaType === 'image/png') return { status, bytes: PNG_1X1, contentType: mediaType, headers };
    const schema = media?.schema as SchemaObject | undefined;
    const value = schema && schema.format !== 'binary' ? this.body(operationId, status, schema) : '';
    return { status, bytes: typeof value === 'string' ? value : JSON.stringify(value), contentType: mediaType, headers };
  }

  /**
   * The body of one documented status: the response's own example when it has a valid one,
   * else a generated one, made coherent; the same for every request, given the seed.
   */
  body(operationId: string, status: number, schema: SchemaObject, example?: unknown, request?: MockRequest): unknown {
    const key = `${operationId} ${status}`;
    // What depends on a request (echoed fields, the id asked for) is made anew for each one.
    if (request === undefined && this.bodies.has(key)) return this.bodies.get(key);
    const validate = this.validators.of(schema);
    if (example !== undefined && validate(example)) {
      this.bodies.set(key, example);
      return example;
    }
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const generated = this.generated(operationId, status, schema, attempt);
      if (generated === undefined) continue;
      for (const candidate of [withStatus(generated, status), generated]) {
        // The values that make the body coherent come from the same seed: one request, one answer.
        const ctx = { operationId, rng: seededRng(seedFor(this.seed, operationId, status, attempt) ^ 0x5bd1e995), ...(request && { request }) };
        const coherentBody = coherent(candidate, ctx);
        if (validate(coherentBody)) {
          if (request === undefined) this.bodies.set(key, coherentBody);
          return coherentBody;
        }
      }
    }
    throw new Error(`json-schema-faker generated no valid body for ${key} in ${MAX_ATTEMPTS} attempts`);
  }

  /** json-schema-faker's body for one attempt's seed, kept: generating is the slow part. */
  private generated(operationId: string, status: number, schema: SchemaObject, attempt: number): unknown {
    const key = `${operationId} ${status} ${attempt}`;
    if (this.raw.has(key)) return this.raw.get(key);
    let generated: unknown;
    try {
      generated = generateSync(schema as JsonSchema, { ...GENERATE, seed: seedFor(this.seed, operationId, status, attempt) });
    } catch {
      // json-schema-faker gives up on some seeds (conflicting constraints): the next attempt tries another.
      generated = undefined;
    }
    this.raw.set(key, generated);
    return generated;
  }

  /** A documented Location header's generated value, else the parent of the request path (e.g. checkout/:id/approve → checkout/:id). */
  private location(operationId: string, status: number, response: ResponseObject, path: string): string {
    const header = Object.entries(response.headers ?? {}).find(([name]) => name.toLowerCase() === 'location')?.[1];
    const schema = header && 'schema' in header ? (header.schema as SchemaObject | undefined) : undefined;
    if (schema) {
      const value = this.body(`${operationId} location`, status, schema);
      if (typeof value === 'string') return value;
    }
    return path.replace(/\/[^/]*\/?$/, '') || '/';
  }
}

/** A media type's `example`, or the value of the first of its `examples`. */
function exampleOf(media: OpenAPIV3_1.MediaTypeObject): unknown {
  if (media.example !== undefined) return media.example;
  const first = Object.values(media.examples ?? {})[0];
  return first !== undefined && 'value' in first ? first.value : undefined;
}

/** The first documented 2xx; an operation without one answers its first 3xx, else its first other status. */
function defaultStatus(responses: Record<string, ResponseObject>): number | undefined {
  // Integer-like keys enumerate in ascending order, which is also the order they are documented in.
  const codes = Object.keys(responses)
    .filter((key) => /^\d{3}$/.test(key))
    .map(Number)
    // 1xx (the event stream's 101) cannot be sent as a plain HTTP response.
    .filter((code) => code >= 200);
  return codes.find((c) => c < 300) ?? codes.find((c) => c < 400) ?? codes[0];
}

/** An error body's `status`/`statusCode` agrees with the HTTP status it is sent with. */
function withStatus(body: unknown, status: number): unknown {
  if (status < 400 || body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  const record = body as Record<string, unknown>;
  const aligned = { ...record };
  if (typeof record.status === 'number') aligned.status = status;
  if (typeof record.statusCode === 'number') aligned.statusCode = status;
  return aligned;
}

/** The values of a path template's parameters in a request path (`/v2/products/{id}` → `{id}`). */
export function pathParams(template: string, path: string): Record<string, string> {
  const names: string[] = [];
  const pattern = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{([^}]+)\\?\}/g, (_m, name: string) => {
    names.push(name);
    return '([^/]+)';
  });
  const match = new RegExp(`^${pattern}/?$`).exec(path);
  if (!match) return {};
  const params: Record<string, string> = {};
  names.forEach((name, i) => {
    try {
      params[name] = decodeURIComponent(match[i + 1] ?? '');
    } catch {
      params[name] = match[i + 1] ?? '';
    }
  });
  return params;
}

/**
 * What a call answers on a transaction past the state it needs (src/transactions/transitions.ts
 * words it so): the exact message, and the explanation of the x-sandbox-hint header.
 */
const CONFLICTS: Readonly<Record<string, { message: string; is: string; only: string; verb: string }>> = {
  payTransaction: { message: 'Transaction already processed', is: 'APPROVED (paid by PIX)', only: 'a PENDING', verb: 'paid' },
  expireTransaction: { message: 'Transaction already processed', is: 'APPROVED (paid by PIX)', only: 'a PENDING', verb: 'expired' },
  declineTransaction: { message: 'Transaction already processed', is: 'APPROVED (paid by PIX)', only: 'a PENDING', verb: 'declined' },
  refundTransaction: { message: 'Transaction not approved', is: 'PENDING', only: 'an APPROVED', verb: 'refunded' },
  refundPurchase: { message: 'Transaction not approved', is: 'PENDING', only: 'an APPROVED', verb: 'refunded' },
  chargebackTransaction: { message: 'Transaction not approved', is: 'PENDING', only: 'an APPROVED', verb: 'charged back' },
};

/** The x-sandbox-hint of a mock error, where the stateful sandbox sends one beside a short message. */
export function errorHint(operationId: string, status: number, params: Record<string, string>): string | undefined {
  const done = CONFLICTS[operationId];
  if (status !== 409 || !done) return undefined;
  return `transaction ${params.id || '100000000'} is ${done.is}; only ${done.only} transaction can be ${done.verb}`;
}

const TRANSACTION_OPERATIONS: readonly string[] = ['getTransaction', 'fillTransaction', 'payTransaction', 'expireTransaction', 'declineTransaction', 'refundTransaction', 'chargebackTransaction'];

/**
 * The message the stateful sandbox answers for this operation and status (where a client matches
 * on it: `Transaction not found`, `Sale value below minimum`); 401 and 403 as the contract words them.
 */
export function errorMessage(operationId: string, status: number, params: Record<string, string>): string {
  const id = params.id ?? params.key ?? '';
  switch (status) {
    case 400:
      if (operationId === 'createPurchase') return 'Sale value below minimum';
      if (operationId === 'createProduct' || operationId === 'updateProduct') return 'name must be 1 to 255 characters long after trimming';
      if (operationId === 'createOffer') return 'amount must be a positive integer number of centavos';
      return 'request body is not valid for this operation';
    case 401:
      return 'Unauthorized';
    case 403:
      return 'Forbidden';
    case 404:
      if (TRANSACTION_OPERATIONS.includes(operationId) || /Checkout|Boleto|Pix/.test(operationId)) return TRANSACTION_NOT_FOUND;
      if (operationId === 'getWebhook' || operationId === 'replayWebhook') return `webhook delivery ${id} not found`;
      if (operationId === 'getObject') return `object ${id} not found`;
      if (id.startsWith('prd_') || /Product|Offer/.test(operationId)) return `product ${id || 'prd_3f1c2a9e-8b7d-4c6e-9a1f-2b3c4d5e6f70'} not found`;
      return 'not found';
    case 409:
      // The withdrawal calls and cash-out answer the same exact text for a repeat or an ended withdrawal.
      return CONFLICTS[operationId]?.message ?? (/Withdrawal|CashOut/.test(operationId) ? 'Transaction already processed' : `transaction ${id || '100000000'} is not in a state that allows this`);
    case 413:
      return `request body is larger than the limit of ${sizeOf(1024 * 1024)}`;
    case 415:
      return 'Content-Type must be application/json';
    default:
      return `HTTP ${status}`;
  }
}
