import { parse as parseQuery } from 'node:querystring';
import { brotliDecompressSync, gunzipSync, inflateSync, zstdDecompressSync } from 'node:zlib';
import type { Request as RoutedRequest } from 'openapi-backend';
import type { Routes, SandboxOperation } from '../http/match.js';
import { parseMediaType } from '../http/media-type.js';
import type { IgnoreNotUsed } from '../http/not-used.js';
import { bodyShape, declaredFields, MAX_BODY_DEPTH } from '../http/request-checks.js';
import type { ResponseValidator } from '../http/response-validation.js';
import type { SpecValidators } from '../http/validate.js';
import { everyProblem } from '../http/validator.js';

/** What the proxy found wrong in one side of an exchange (contract v5, "Proxy, recording and drift"). */
export interface Finding {
  side: 'request' | 'response';
  /** undefined for a request no operation of openapi.yaml matches. */
  operationId: string | undefined;
  /** A JSON pointer into the part it names: `/body/amount`, `/query/limit`, `/path/id`, `/header/…`, `/status`. */
  pointer: string;
  /** The rule broken: a JSON Schema keyword (`required`, `minimum`, `format` …), or `json`, `media-type`, `depth`, `status`. */
  rule: string;
  message: string;
}

/** The parts of openapi-backend's instance paths, as the findings name them. */
const PARTS: Record<string, string> = { requestBody: 'body', query: 'query', path: 'path', header: 'header', cookie: 'cookie' };

function pointerOf(path: string): string {
  const match = /^\/(requestBody|query|path|header|cookie)(?=\/|$)/.exec(path);
  if (!match?.[1]) return `/body${path}`;
  return `/${PARTS[match[1]] ?? match[1]}${path.slice(match[0].length)}`;
}

export interface RequestSeen {
  method: string;
  path: string;
  /** The query string without its `?`, or undefined when the target has none. */
  query: string | undefined;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export interface ResponseSeen {
  status: number;
  contentType: string | undefined;
  contentEncoding: string | string[] | undefined;
  body: Buffer;
}

/**
 * A body's bytes as its Content-Encoding says to read them: a real service compresses its
 * answers when the client accepts it, and the bytes forwarded stay the compressed ones; only
 * the checks and the recording read them decoded. Undefined for an encoding it cannot read.
 */
export function decodedBody(bytes: Buffer, encoding: string | string[] | undefined): Buffer | undefined {
  const codings = (Array.isArray(encoding) ? encoding.join(',') : (encoding ?? ''))
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  let out = bytes;
  try {
    // Applied in the order listed, so undone from the last.
    for (const coding of codings.reverse()) {
      if (coding === 'gzip' || coding === 'x-gzip') out = gunzipSync(out);
      else if (coding === 'deflate') out = inflateSync(out);
      else if (coding === 'br') out = brotliDecompressSync(out);
      else if (coding === 'zstd') out = zstdDecompressSync(out);
      else return undefined;
    }
  } catch {
    return undefined;
  }
  return out;
}

/** A body as JSON, or why it is not: the proxy looks at a body only when its media type says JSON. */
function parseJson(bytes: Buffer): { value: unknown } | { error: string } {
  try {
    return { value: JSON.parse(bytes.toString('utf8')) as unknown };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

/** Whether a Content-Type is JSON (`application/json`, `application/*+json`); undefined without one. */
export const isJsonType = (contentType: string | undefined): boolean | undefined => (contentType === undefined ? undefined : parseMediaType(contentType).isJson === true);

/**
 * Holds a request and an answer to what the sandbox would: the same route table, the same
 * request validators (every error, as the sandbox's hint lists them), the same `x-not-used`
 * trimming, the same response validator. A finding never changes what is forwarded.
 */
export class ExchangeChecker {
  constructor(
    private readonly routes: Routes,
    private readonly validators: SpecValidators,
    private readonly ignoreNotUsed: IgnoreNotUsed,
    private readonly responses: ResponseValidator,
  ) {}

  /** The operation of a request, or undefined when openapi.yaml has none for it. */
  operationOf(method: string, path: string): SandboxOperation | undefined {
    const matched = this.routes.match(method, path);
    return typeof matched === 'string' ? undefined : matched;
  }

  checkRequest(operation: SandboxOperation | undefined, request: RequestSeen): Finding[] {
    if (!operation) {
      return [{ side: 'request', operationId: undefined, pointer: '', rule: 'operation', message: `${request.method} ${request.path} is no operation of openapi.yaml` }];
    }
    const operationId = operation.operationId;
    const finding = (pointer: string, rule: string, message: string): Finding => ({ side: 'request', operationId, pointer, rule, message });
    const contentType = typeof request.headers['content-type'] === 'string' ? request.headers['content-type'] : undefined;
    const expects = operation.requestBody && 'content' in operation.requestBody ? operation.requestBody.content : undefined;
    let body: unknown;
    if (request.body.length > 0) {
      const json = isJsonType(contentType);
      if (expects?.['application/json'] && json !== true) return [finding('/header/content-type', 'media-type', 'Content-Type must be application/json')];
      if (json === true) {
        const bytes = decodedBody(request.body, request.headers['content-encoding']);
        if (bytes === undefined) return [finding('/header/content-encoding', 'content-encoding', `the request's Content-Encoding ${String(request.headers['content-encoding'])} cannot be read: its body is not checked`)];
        const parsed = parseJson(bytes);
        if ('error' in parsed) return [finding('/body', 'json', `request body is not valid JSON: ${parsed.error}`)];
        body = parsed.value;
      }
    }
    const shape = bodyShape(body);
    if (shape.tooDeep) return [finding('/body', 'depth', `${shape.tooDeep} is nested deeper than ${MAX_BODY_DEPTH} levels`)];
    if (shape.nonFinite) return [finding('/body', 'number', `${shape.nonFinite} is a number JSON cannot keep (too large, e.g. 1e999)`)];
    const routed: RoutedRequest = {
      method: request.method,
      path: request.path,
      // Multipart bodies are the upload handler's to read; the schema sees their fields as present, as in the sandbox.
      body: (contentType !== undefined && parseMediaType(contentType).isFormData === true ? {} : this.ignoreNotUsed(operation, body)) as RoutedRequest['body'],
      // node's querystring, as the sandbox's edge parses it (a repeated parameter as a list).
      query: request.query === undefined ? undefined : (parseQuery(request.query) as RoutedRequest['query']),
      headers: request.headers as RoutedRequest['headers'],
    };
    const errors = this.validators.every.validateRequest(routed, operation).errors;
    if (!errors) return [];
    return everyProblem(errors, declaredFields(operation)).map((problem) => finding(pointerOf(problem.path), problem.keyword, problem.message));
  }

  checkResponse(operation: SandboxOperation | undefined, request: { method: string; path: string }, response: ResponseSeen): Finding[] {
    if (!operation) return [];
    const operationId = operation.operationId;
    const finding = (pointer: string, rule: string, message: string): Finding => ({ side: 'response', operationId, pointer, rule, message });
    const json = isJsonType(response.contentType);
    let body: unknown;
    if (json === true) {
      const bytes = decodedBody(response.body, response.contentEncoding);
      if (bytes === undefined) return [finding('/header/content-encoding', 'content-encoding', `the answer's Content-Encoding ${String(response.contentEncoding)} cannot be read: its body is not checked`)];
      const parsed = parseJson(bytes);
      if ('error' in parsed) return [finding('/body', 'json', `response body is not valid JSON: ${parsed.error}`)];
      body = parsed.value;
    } else if (response.body.length > 0 || json === false) {
      // Only JSON is checked by schema: a documented JSON answer in another media type is a finding of its own.
      const documented = (operation.responses as Record<string, { content?: Record<string, unknown> } | undefined> | undefined)?.[String(response.status)];
      if (documented?.content?.['application/json']) return [finding('/header/content-type', 'media-type', `status ${response.status} is documented as application/json, not ${response.contentType ?? 'no Content-Type'}`)];
      return [];
    }
    const violation = this.responses.check(operation, request.method, request.path, response.status, body);
    if (!violation) return [];
    if (violation.errors.length === 0) return [finding('/status', 'status', violation.reason)];
    return violation.errors.map((error) => {
      const params = error.params as Record<string, unknown>;
      const named = params.missingProperty ?? params.additionalProperty ?? params.unevaluatedProperty;
      const pointer = `/body${error.instancePath}${named === undefined ? '' : `/${String(named)}`}`;
      return finding(pointer, error.keyword, `${error.instancePath || 'body'} ${error.message ?? 'is invalid'}${named === undefined ? '' : ` (${String(named)})`}`);
    });
  }
}
