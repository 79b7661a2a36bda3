import type { ValidateFunction } from 'ajv';
import { generateSync, type GenerateOptions, type JsonSchema, type Random } from 'json-schema-faker';
import type { Operation } from 'openapi-backend';
import type { OpenAPIV3_1 } from 'openapi-types';
import { errorBody, familyOf, sizeOf } from './errors.js';
import type { AnyReply as Reply } from './call.js';
import { headerText } from './header-text.js';
import { createAjv } from './validator.js';
import { seededRng } from '../rails/random.js';
import { DEFAULTS } from '../config.js';
import { conflictHint, type MockAnswer, type MockRequest, type MockSettings } from '../mock/answer.js';
import { coherent } from '../mock/coherent.js';
import { preferredStatus } from '../mock/prefer.js';
import { seedFor } from '../mock/seed.js';
import { DEFAULT_FEES } from '../transactions/fees.js';
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
  /** The body limits the sandbox enforces, named by the 413s (`{jsonLimit}`, `{imageLimit}` in openapi.yaml's x-message). */
  limits?: { jsonBytes: number; imageBytes: number };
  /** The public URL, Pix lifetime and fees answers carry; default those of a sandbox started with the defaults. */
  settings?: MockSettings;
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
  /** Each operation path's pattern, compiled at its first request rather than at every one; bounded by openapi.yaml's paths. */
  private readonly matchers = new Map<string, TemplateMatcher>();
  private readonly limits: { jsonLimit: string; imageLimit: string };
  private readonly settings: MockSettings;

  constructor(options: MockResponderOptions) {
    this.seed = options.seed;
    this.settings = options.settings ?? { publicUrl: () => `http://localhost:${DEFAULTS.port}`, pixExpiryMs: DEFAULTS.pixExpiryMs, fees: DEFAULT_FEES };
    const limits = options.limits ?? { jsonBytes: DEFAULTS.jsonLimitBytes, imageBytes: DEFAULTS.imageLimitBytes };
    this.limits = { jsonLimit: sizeOf(limits.jsonBytes), imageLimit: sizeOf(limits.imageBytes) };
  }

  private matcherOf(template: string): TemplateMatcher {
    let matcher = this.matchers.get(template);
    if (matcher === undefined) this.matchers.set(template, (matcher = templateMatcher(template)));
    return matcher;
  }

  /** The operation's answer; `answer` is what its endpoint says of mock mode (src/http/endpoint.ts). */
  respond(operation: Operation, req: Pick<ApiRequest, 'headers' | 'path'> & Partial<Pick<ApiRequest, 'body' | 'query'>>, answer?: MockAnswer): Reply {
    const operationId = operation.operationId ?? `${operation.method} ${operation.path}`;
    const request: MockRequest = { params: pathParams(operation.path, req.path, this.matcherOf(operation.path)), query: (req.query ?? {}) as Record<string, unknown>, body: req.body as unknown };
    const responses = (operation.responses ?? {}) as Record<string, ResponseObject>;
    const preferred = preferredStatus(req.headers.prefer);
    const honoured = preferred !== undefined && preferred >= 200 && responses[String(preferred)] !== undefined;
    const status = honoured ? preferred : defaultStatus(responses);
    if (status === undefined) throw new Error(`${operationId} documents no response the mock can send`);
    const headers: Record<string, string> = { [MOCK_HEADER]: `seed=${this.seed}` };
    // RFC 7240: a preference the server cannot apply is ignored; applied ones are named.
    if (honoured) headers['preference-applied'] = `code=${status}`;
    // What the service refuses whatever its state (a key that does not fit its type), the mock refuses too, unless a status was asked for.
    const refusal = honoured ? undefined : answer?.refusal?.(request);
    if (refusal) return { status: refusal.status, json: errorBody(familyOf(req.path), refusal.status, refusal.message), headers: { ...headers, 'x-sandbox-hint': headerText(refusal.hint) } };
    const response = responses[String(status)] ?? { description: '' };
    const content = response.content ?? {};
    const json = content['application/json'];
    const message = messageOf(response);
    if (json && message !== undefined) {
      // The error the real endpoint answers, as openapi.yaml words it, in its family's shape: what a client matches on.
      const hint = status === 409 ? conflictHint(answer, request.params) : undefined;
      if (hint !== undefined) headers['x-sandbox-hint'] = headerText(hint);
      return { status, json: errorBody(familyOf(req.path), status, this.fill(message, request)), headers };
    }
    if (json) {
      return { status, json: json.schema ? this.body(operationId, status, json.schema as SchemaObject, exampleOf(json), request, answer) : null, headers };
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
  body(operationId: string, status: number, schema: SchemaObject, example?: unknown, request?: MockRequest, answer?: MockAnswer): unknown {
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
        const ctx = { operationId, rng: seededRng(seedFor(this.seed, operationId, status, attempt) ^ 0x5bd1e995), settings: this.settings, ...(request && { request }), ...(answer && { answer }) };
        const coherentBody = coherent(candidate, ctx);
        if (validate(coherentBody)) {
          if (request === undefined) this.bodies.set(key, coherentBody);
          return coherentBody;
        }
      }
    }
    throw new Error(`json-schema-faker generated no valid body for ${key} in ${MAX_ATTEMPTS} attempts`);
  }

  /**
   * An x-message with its placeholders filled: `{id}`, `{key}` from the path, another name from
   * the request body's field of that name, `{jsonLimit}` and `{imageLimit}` from the limits.
   */
  private fill(message: string, request: MockRequest): string {
    const body = request.body !== null && typeof request.body === 'object' ? (request.body as Record<string, unknown>) : {};
    return message.replace(/\{(\w+)\}/g, (placeholder, name: string) => {
      if (name === 'jsonLimit' || name === 'imageLimit') return this.limits[name];
      const value = request.params[name] ?? body[name];
      return typeof value === 'string' ? value : placeholder;
    });
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

/**
 * A template's pattern: each parameter one `[^/]+` between literal text, so a match is one
 * linear pass whatever the request path.
 */
interface TemplateMatcher {
  names: string[];
  pattern: RegExp;
}

function templateMatcher(template: string): TemplateMatcher {
  const names: string[] = [];
  const source = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{([^}]+)\\?\}/g, (_m, name: string) => {
    names.push(name);
    return '([^/]+)';
  });
  return { names, pattern: new RegExp(`^${source}/?$`) };
}

/** The values of a path template's parameters in a request path (`/v2/products/{id}` → `{id}`). */
export function pathParams(template: string, path: string, matcher: TemplateMatcher = templateMatcher(template)): Record<string, string> {
  const { names, pattern } = matcher;
  const match = pattern.exec(path);
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

/** openapi.yaml's `x-message` of an error response: the exact message the stateful sandbox answers in the case the response describes. */
function messageOf(response: ResponseObject): string | undefined {
  return 'x-message' in response && typeof response['x-message'] === 'string' ? response['x-message'] : undefined;
}
