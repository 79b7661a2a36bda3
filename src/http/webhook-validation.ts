import type { ErrorObject, ValidateFunction } from 'ajv';
import type { OpenAPIV3_1 } from 'openapi-types';
import type { OpenApiDocument } from '../spec/openapi.js';
import { createAjv } from './validator.js';

/** What a webhook breaks of openapi.yaml's `webhooks` section: where, which rule, in words. */
export interface WebhookProblem {
  /** A JSON pointer into the part it names: `/body/payload/amount`, `/header/x-signature`. */
  pointer: string;
  /** The JSON Schema keyword broken (`required`, `type`, `const`, `pattern` …), or `json`. */
  rule: string;
  message: string;
}

interface WebhookContract {
  body: ValidateFunction;
  headers: Array<{ name: string; required: boolean; validate: ValidateFunction }>;
}

type Headers = Record<string, string | string[] | undefined>;

const problemOf = (part: string, error: ErrorObject): WebhookProblem => {
  const params = error.params as Record<string, unknown>;
  const named = params.missingProperty ?? params.additionalProperty ?? params.unevaluatedProperty;
  const at = `${error.instancePath}${named === undefined ? '' : `/${String(named)}`}`;
  return { pointer: `/${part}${at}`, rule: error.keyword, message: `${error.instancePath || part} ${error.message ?? 'is invalid'}${named === undefined ? '' : ` (${String(named)})`}` };
};

/**
 * Holds a webhook (its parsed body and its headers) to the event's entry of openapi.yaml's
 * `webhooks` section: the body to its request schema, the headers to its header parameters
 * (`x-signature` required). A body whose `event` has no entry is held to the envelope every
 * event shares (`WebhookBody`), which names the events it may have. The signature's value is
 * not checked here: that takes the account's secret (src/proxy/webhooks.ts).
 */
export class WebhookValidator {
  private readonly ajv = createAjv({ allErrors: true });
  private readonly contracts = new Map<string, WebhookContract>();
  private readonly envelope: ValidateFunction | undefined;
  /** The events openapi.yaml's `webhooks` section has, in its order. */
  readonly events: readonly string[];

  constructor(document: OpenApiDocument) {
    const webhooks = document.webhooks ?? {};
    this.events = Object.keys(webhooks);
    for (const [event, item] of Object.entries(webhooks)) {
      // Dereferenced (src/spec/openapi.ts): no $ref is left in the path items.
      const post = (item as OpenAPIV3_1.PathItemObject).post;
      const schema = (post?.requestBody as OpenAPIV3_1.RequestBodyObject | undefined)?.content['application/json']?.schema;
      if (!post || !schema) continue;
      const headers = ((post.parameters ?? []) as OpenAPIV3_1.ParameterObject[])
        .filter((p) => p.in === 'header' && p.schema !== undefined)
        .map((p) => ({ name: p.name.toLowerCase(), required: p.required === true, validate: this.ajv.compile(p.schema as object) }));
      this.contracts.set(event, { body: this.ajv.compile(schema as object), headers });
    }
    const shared = document.components?.schemas?.WebhookBody;
    this.envelope = shared === undefined ? undefined : this.ajv.compile(shared as object);
  }

  /** The event a body names, when it is one openapi.yaml's `webhooks` has. */
  eventOf(body: unknown): string | undefined {
    const event = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>).event : undefined;
    return typeof event === 'string' && this.contracts.has(event) ? event : undefined;
  }

  /** Every problem of one webhook; none when it is what openapi.yaml says its event sends. */
  check(body: unknown, headers: Headers): WebhookProblem[] {
    const event = this.eventOf(body);
    const contract = event === undefined ? undefined : this.contracts.get(event);
    const validate = contract?.body ?? this.envelope;
    const problems: WebhookProblem[] = [];
    if (validate && !validate(body)) problems.push(...(validate.errors ?? []).map((error) => problemOf('body', error)));
    for (const header of contract?.headers ?? []) {
      const raw = headers[header.name];
      const value = Array.isArray(raw) ? raw.join(', ') : raw;
      if (value === undefined) {
        if (header.required) problems.push({ pointer: `/header/${header.name}`, rule: 'required', message: `header ${header.name} is required` });
      } else if (!header.validate(value)) {
        problems.push(...(header.validate.errors ?? []).map((error) => ({ ...problemOf(`header/${header.name}`, error), message: `header ${header.name} ${error.message ?? 'is invalid'}` })));
      }
    }
    // Ajv reports a property once per schema of an allOf that holds it: one problem each.
    return problems.filter((p, i) => problems.findIndex((q) => q.pointer === p.pointer && q.rule === p.rule && q.message === p.message) === i);
  }
}
