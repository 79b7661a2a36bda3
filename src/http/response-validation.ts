import type { ErrorObject, ValidateFunction } from 'ajv';
import type { Operation } from 'openapi-backend';
import type { OpenAPIV3_1 } from 'openapi-types';
import type { ResponseValidationMode } from '../config.js';
import type { Logger } from '../log.js';
import type { OpenApiDocument } from '../spec/openapi.js';
import { errorBody, familyOf, type ProductErrorBody, type TransactionErrorBody } from './errors.js';
import { headerText } from './header-text.js';
import { maskJsonText } from './masking.js';
import { createAjv } from './validator.js';

/** Set on every response that does not match openapi.yaml, in both modes. */
export const INVALID_HEADER = 'x-sandbox-response-invalid';
/** Start of the 500's message in strict mode. */
export const INVALID_MESSAGE = 'response does not match openapi.yaml';

export interface ResponseViolation {
  /** undefined for a request no operation matches (404, 405), checked against its family's error schema. */
  operationId: string | undefined;
  status: number;
  /** One line: the operation, the status and the first mismatch. */
  reason: string;
  errors: Array<Pick<ErrorObject, 'instancePath' | 'keyword' | 'message' | 'params'>>;
}

type ResponseObject = OpenAPIV3_1.ResponseObject;
type SchemaObject = OpenAPIV3_1.SchemaObject;

/**
 * Checks JSON bodies against the response the operation documents for their status.
 *
 * openapi-backend's `validator.validateResponse` builds a fresh Ajv (two, with our
 * customizeAjv) per operation and compiles every status of it on first use: about 750 ms
 * for this document. One shared Ajv compiling each (operation, status) schema on first
 * use, and reusing the schemas the operations share, takes about 45 ms for all of them;
 * each is compiled once and reused for every later response.
 */
export class ResponseValidator {
  private readonly ajv = createAjv({});
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly errorSchemas: Record<'product' | 'transaction', SchemaObject | undefined>;

  constructor(document: OpenApiDocument) {
    const schemas = document.components?.schemas ?? {};
    this.errorSchemas = { product: schemas.ProductError, transaction: schemas.TransactionError };
  }

  /**
   * The mismatch of one JSON response, or undefined when it matches openapi.yaml: checked
   * against what `operation` documents, the operation the match stage found for the request
   * (never routed again here); without one, against the path's family's error shape.
   */
  check(operation: Operation | undefined, method: string, path: string, status: number, body: unknown): ResponseViolation | undefined {
    if (!operation) {
      // Unrouted (404, 405): the family's error shape.
      const family = familyOf(path);
      const schema = this.errorSchemas[family];
      return schema && this.validate(`unrouted ${family}`, schema, undefined, `${method} ${path}`, status, body);
    }
    const operationId = operation.operationId ?? `${method} ${operation.path}`;
    const documented = documentedResponse(operation, status);
    if (!documented) {
      return { operationId, status, reason: `${operationId} does not document status ${status}`, errors: [] };
    }
    const media = documented.content?.['application/json'];
    if (!media) {
      return { operationId, status, reason: `${operationId} documents status ${status} without a JSON body`, errors: [] };
    }
    if (!media.schema) return undefined;
    return this.validate(`${operationId} ${status}`, media.schema as SchemaObject, operationId, operationId, status, body);
  }

  private validate(
    key: string,
    schema: SchemaObject,
    operationId: string | undefined,
    label: string,
    status: number,
    body: unknown,
  ): ResponseViolation | undefined {
    let validate = this.validators.get(key);
    if (!validate) {
      validate = this.ajv.compile(schema);
      this.validators.set(key, validate);
    }
    if (validate(body)) return undefined;
    const errors = (validate.errors ?? []).map(({ instancePath, keyword, message, params }) => ({ instancePath, keyword, message, params }));
    const first = errors[0];
    const detail = first ? describe(first) : 'is invalid';
    return { operationId, status, reason: `${label} ${status}: ${detail}`, errors };
  }
}

/** The response an operation documents for a status: exact, then `4XX`-style ranges, then `default`. */
function documentedResponse(operation: Operation, status: number): ResponseObject | undefined {
  const responses = (operation.responses ?? {}) as Record<string, ResponseObject | undefined>;
  return responses[String(status)] ?? responses[`${Math.floor(status / 100)}XX`] ?? responses.default;
}

function describe(error: Pick<ErrorObject, 'instancePath' | 'keyword' | 'message' | 'params'>): string {
  const at = error.instancePath || 'body';
  const params = error.params as Record<string, unknown>;
  const extra = params.additionalProperty ?? params.unevaluatedProperty;
  const suffix = typeof extra === 'string' ? ` (${extra})` : '';
  return `${at} ${error.message ?? 'is invalid'}${suffix}`;
}

/** The start of a body for the log, its secrets masked (an account's answer carries its keys). */
function excerpt(body: unknown): string {
  const text = maskJsonText(JSON.stringify(body) ?? String(body));
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}

/** What the reply stage does with a JSON body that does not match: mark it, and in strict mode send this instead. */
export interface ResponseReview {
  /** x-sandbox-response-invalid: the first mismatch, one line. */
  header: string;
  /** Strict mode's answer: a 500 naming the mismatch, in the endpoint family's error shape. */
  replacement?: { status: 500; json: ProductErrorBody | TransactionErrorBody };
}

/**
 * Response validation as the reply stage applies it to every JSON answer it writes (handlers'
 * replies, the mock's, every error of the error stage; a fault rule's injected status
 * excepted): a mismatch is logged at error level and marked with
 * `x-sandbox-response-invalid`; `strict` replaces it with a 500 naming the mismatch.
 */
export class ResponseValidation {
  private readonly validator: ResponseValidator;

  constructor(
    document: OpenApiDocument,
    private readonly mode: Exclude<ResponseValidationMode, 'off'>,
    private readonly logger: Logger,
  ) {
    this.validator = new ResponseValidator(document);
  }

  review(request: { method: string; path: string; operation: Operation | undefined; traceId: string | null }, status: number, body: unknown): ResponseReview | undefined {
    const { method, path, traceId } = request;
    const violation = this.validator.check(request.operation, method, path, status, body);
    if (!violation) return undefined;
    this.logger.error(
      { operation: violation.operationId ?? null, traceId, method, path, status: violation.status, errors: violation.errors, body: excerpt(body) },
      `${INVALID_MESSAGE}: ${violation.reason}`,
    );
    const header = headerText(violation.reason);
    if (this.mode === 'log') return { header };
    return { header, replacement: { status: 500, json: errorBody(familyOf(path), 500, `${INVALID_MESSAGE}: ${violation.reason}`) } };
  }
}
