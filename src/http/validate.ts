import type { Options } from 'ajv';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import { OpenAPIValidator, type Request as RoutedRequest, type ValidationContext } from 'openapi-backend';
import type { AccountRecord } from '../accounts/accounts.js';
import type { OpenApiDocument } from '../spec/openapi.js';
import { HttpError } from './errors.js';
import type { Routes, SandboxOperation } from './match.js';
import type { IgnoreNotUsed } from './not-used.js';
import { PrebuiltRequestValidator, type PrebuiltValidators } from './prebuilt-validators.js';
import type { ApiRequest } from './request.js';
import { bodyShape, declaredFields, exactValidationMessage, MAX_BODY_DEPTH, unknownPrototypeField, type BodyShape } from './request-checks.js';
import { createAjv, describeEveryProblem, describeValidationErrors } from './validator.js';

/** The parts of a request its handler gets, checked against openapi.yaml and coerced to its types. */
export interface Validated {
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: unknown;
}

export interface SpecValidatorOptions {
  allErrors?: boolean;
  /** The build's compiled validators (src/http/prebuilt-validators.ts), used for the operations they have. */
  prebuilt?: PrebuiltValidators;
  /** More Ajv options: the build's `code` (standalone source). */
  ajv?: Options;
  /** Sees each Ajv openapi-backend asks for, with what it is for: the build writes each one's code. */
  onAjv?: (ajv: Ajv2020, context: ValidationContext) => void;
}

/**
 * openapi-backend's request validator, as documented: on the routes' OpenAPIRouter (its
 * `router` option) with the sandbox's Ajv (2020-12 and formats, src/http/validator.ts); each
 * operation's validators are compiled on its first request, as openapi-backend's quick mode does,
 * unless the build compiled them already.
 */
export function createSpecValidator(routes: Routes, { allErrors = false, prebuilt, ajv, onAjv }: SpecValidatorOptions = {}): OpenAPIValidator<OpenApiDocument> {
  const options: ConstructorParameters<typeof OpenAPIValidator<OpenApiDocument>>[0] = {
    definition: routes.router.definition,
    router: routes.router,
    lazyCompileValidators: true,
    coerceTypes: true,
    ajvOpts: { allErrors },
    customizeAjv: (_original, ajvOptions, context) => {
      const made = createAjv({ ...ajvOptions, ...ajv });
      onAjv?.(made, context);
      return made;
    },
  };
  return prebuilt ? new PrebuiltRequestValidator(options, prebuilt, allErrors ? 'every' : 'first') : new OpenAPIValidator(options);
}

/**
 * The request validators: `first` stops at a request's first error (every request goes
 * through it); `every` collects them all, and looks only at a request `first` refused, so the
 * hint can list everything to fix at once while a valid request costs what it did.
 */
export interface SpecValidators {
  first: OpenAPIValidator<OpenApiDocument>;
  every: OpenAPIValidator<OpenApiDocument>;
}

export function createSpecValidators(routes: Routes, prebuilt?: PrebuiltValidators): SpecValidators {
  return { first: createSpecValidator(routes, { prebuilt }), every: createSpecValidator(routes, { allErrors: true, prebuilt }) };
}

/** At most this many problems in a hint: a body of junk could have thousands. */
const MAX_PROBLEMS = 20;

/**
 * Bodies up to this size (by Content-Length) get the list of every problem: collecting every
 * error costs one per array item or field, and a 1 MB body of junk would have hundreds of
 * thousands. A hand-written body is far smaller (a full purchase is under 2 KB).
 */
export const EVERY_PROBLEM_MAX_BYTES = 16 * 1024;

/**
 * The validate stage, in the order a real API gateway checks: permission (403), media type
 * (415), what the store could not keep (nesting depth, non-finite numbers: 400), then
 * openapi.yaml's schemas (400, an exact message where integrations match one, the
 * explanation in the hint) on the body without the fields its variant does not use
 * (`x-not-used`), which the handler then never sees.
 */
export function validateRequest(
  validators: SpecValidators,
  operation: SandboxOperation,
  account: AccountRecord | undefined,
  req: ApiRequest,
  ignoreNotUsed: IgnoreNotUsed,
): Validated {
  const shape = refuse(operation, account, req);
  const routed: RoutedRequest = {
    method: req.method,
    path: req.path,
    // Multipart streams are read by their handler; the schema sees their (binary) fields as present.
    body: (req.facts.media?.isFormData === true ? {} : ignoreNotUsed(operation, req.body)) as RoutedRequest['body'],
    // None at all without a query string: openapi-backend reads an absent query much faster than an empty object.
    query: req.hasQuery ? (req.query as RoutedRequest['query']) : undefined,
    headers: req.headers as RoutedRequest['headers'],
  };
  const validation = validators.first.validateRequest(routed, operation);
  if (validation.errors) {
    const described = describeValidationErrors(validation.errors);
    // Integrations match some messages exactly; the sandbox's explanation then goes in the hint.
    const exact = exactValidationMessage(validation.errors);
    const { declared } = req.facts;
    const listed = declared.framing === 'none' || (declared.framing === 'length' && declared.bytes <= EVERY_PROBLEM_MAX_BYTES);
    const hint = (listed ? everyProblem(validators.every, routed, operation) : undefined) ?? (exact ? described : undefined);
    throw new HttpError(400, exact ?? described, hint === undefined ? {} : { hint });
  }
  const unknownField = shape.prototypeName ? unknownPrototypeField(operation, routed.body) : undefined;
  if (unknownField) throw new HttpError(400, unknownField);
  const coerced = validation.coerced as { params?: Record<string, string>; query?: Record<string, unknown> };
  return { params: coerced.params ?? {}, query: coerced.query ?? {}, body: routed.body };
}

/**
 * Every problem of a refused request, in the body's documented field order, when there is
 * more than one (the message names one: the one the real service, or the sandbox so far, names).
 */
function everyProblem(every: OpenAPIValidator<OpenApiDocument>, routed: RoutedRequest, operation: SandboxOperation): string | undefined {
  const errors = every.validateRequest(routed, operation).errors;
  if (!errors) return undefined;
  const problems = describeEveryProblem(errors, declaredFields(operation));
  if (problems.length < 2) return undefined;
  const shown = problems.slice(0, MAX_PROBLEMS);
  const more = problems.length > shown.length ? `; and ${problems.length - shown.length} more` : '';
  return `${problems.length} problems, in the order openapi.yaml documents the body's fields: ${shown.join('; ')}${more}`;
}

/**
 * The checks that come before schema validation: permission, media type (as the edge read
 * it, src/http/request.ts: the body stage read the body by the same answer), then what the
 * store could not keep, found in the one walk of the body (request-checks.ts bodyShape).
 */
function refuse(operation: SandboxOperation, account: AccountRecord | undefined, req: ApiRequest): BodyShape {
  const permission = operation['x-permission'];
  if (permission && account && !account.permissions.includes(permission)) {
    throw new HttpError(403, `API key lacks the permission ${permission}`);
  }
  const expects = operation.requestBody && 'content' in operation.requestBody ? operation.requestBody.content : undefined;
  const { media } = req.facts;
  // A declared body in another media type is refused, an empty one too (as the shared-use checks
  // refuse one); one without a Content-Type only when it may hold bytes: an empty body without
  // one is what `curl -X POST` and `fetch` without a body send.
  const refused = (accepted: boolean): boolean => req.facts.declaresBody && (media === undefined ? req.facts.mayHoldBytes : !accepted);
  if (expects?.['application/json'] && refused(media?.isJson === true)) throw new HttpError(415, 'Content-Type must be application/json');
  // Without this, a non-multipart upload reaches validation as "no body" and answers 400.
  if (expects?.['multipart/form-data'] && refused(media?.isFormData === true)) throw new HttpError(415, 'Content-Type must be multipart/form-data');
  const shape = bodyShape(req.body);
  if (shape.tooDeep) throw new HttpError(400, `${shape.tooDeep} is nested deeper than ${MAX_BODY_DEPTH} levels`);
  if (shape.nonFinite) throw new HttpError(400, `${shape.nonFinite} is a number JSON cannot keep (too large, e.g. 1e999)`);
  return shape;
}
