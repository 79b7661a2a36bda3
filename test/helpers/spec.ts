import { OpenAPIBackend, type Operation } from 'openapi-backend';
import { familyOf } from '../../src/http/errors.js';
import { createAjv } from '../../src/http/validator.js';
import { loadOpenApi } from '../../src/spec/openapi.js';

/**
 * Every response the suite receives is checked against openapi.yaml: the status must be
 * documented for the operation and the body must match its schema, so code and spec
 * cannot drift apart unnoticed.
 */
let backend: Promise<OpenAPIBackend> | undefined;

function specBackend(): Promise<OpenAPIBackend> {
  backend ??= loadOpenApi().then((document) => {
    const api = new OpenAPIBackend({
      definition: document,
      quick: true,
      customizeAjv: (_ajv, options) => createAjv(options),
    });
    api.init();
    return api;
  });
  return backend;
}

const PRODUCT_ERROR = ['status', 'error'];
const TRANSACTION_ERROR = ['statusCode', 'message'];

export async function assertMatchesSpec(method: string, url: URL, status: number, contentType: string, body: unknown): Promise<void> {
  const api = await specBackend();
  let operation: Operation | undefined;
  try {
    operation = api.router.matchOperation({ method, path: url.pathname, headers: {} }, true);
  } catch {
    operation = undefined;
  }
  if (!operation) {
    // Unrouted requests (404/405) still answer in their family's error shape.
    const keys = familyOf(url.pathname) === 'product' ? PRODUCT_ERROR : TRANSACTION_ERROR;
    for (const key of keys) {
      if (!(body && typeof body === 'object' && key in body)) {
        throw new Error(`${method} ${url.pathname} → ${status}: body lacks ${key}: ${JSON.stringify(body)}`);
      }
    }
    return;
  }
  const documented = operation.responses?.[String(status)];
  if (!documented) {
    throw new Error(`${method} ${url.pathname} → ${status} is not documented for ${operation.operationId}: ${JSON.stringify(body)}`);
  }
  if (!contentType.startsWith('application/json')) return;
  const result = api.validator.validateResponse(body, operation, status);
  if (result.errors?.length) {
    throw new Error(
      `${method} ${url.pathname} → ${status} does not match openapi.yaml (${operation.operationId}): ` +
        `${JSON.stringify(result.errors.slice(0, 3))}\nbody: ${JSON.stringify(body)}`,
    );
  }
}
