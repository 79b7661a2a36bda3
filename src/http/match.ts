import type { Operation } from 'openapi-backend';
import type { OpenApiDocument } from '../spec/openapi.js';
import type { Permission } from '../spec/types.js';
import { HttpError } from './errors.js';
import type { SpecRouter } from './openapi-adapter.js';
/** The 501 message for an endpoint openapi.yaml lists as not emulated (request-checks.ts notEmulatedCheck). */
export type NotEmulated = (method: string, path: string) => string | undefined;

/** An operation of openapi.yaml, with the sandbox's own extension. */
export type SandboxOperation = Operation<OpenApiDocument> & { 'x-permission'?: Permission };

/**
 * Stage 2, match: the request's operation in openapi.yaml, or the answer that there is none:
 * 501 for an endpoint of the real service the sandbox does not emulate, 404 for a path the
 * spec lacks (or that cannot be decoded), 405 with `Allow` for a path it has with other methods.
 */
export function matchOperation(router: SpecRouter, notEmulated: NotEmulated, method: string, path: string): SandboxOperation {
  // Path parameters are decoded with decodeURIComponent, which throws on a bad escape: such a path names nothing.
  if (!isDecodable(path)) throw new HttpError(404, `no route for ${method} ${path}`);
  // Endpoints of the real service that integrations call but the sandbox does not emulate:
  // a clear 501 rather than whatever route their path happens to resemble (a 405).
  const unemulated = notEmulated(method, path);
  if (unemulated) throw new HttpError(501, unemulated);
  const matched = router.match(method, path);
  if (matched === 'not-found') throw new HttpError(404, `${method} ${path} is not emulated by the sandbox: the spec has no such endpoint`);
  // RFC 9110: a 405 says which methods the resource has.
  if (matched === 'method-not-allowed') throw new HttpError(405, `${method} is not allowed on ${path}`, { headers: { allow: router.allowedMethods(path).join(', ') } });
  return matched;
}

/** The operation a request names, without deciding its answer (whether to read its body). */
export function operationOf(router: SpecRouter, notEmulated: NotEmulated, method: string, path: string): SandboxOperation | undefined {
  if (!isDecodable(path) || notEmulated(method, path)) return undefined;
  const matched = router.match(method, path);
  return typeof matched === 'string' ? undefined : matched;
}

export function isDecodable(path: string): boolean {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}
