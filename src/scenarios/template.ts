/**
 * `{{ path }}` interpolation over what the scenario knows so far:
 *
 * - `steps.<id>.response.<path>`, `steps.<id>.status`, `steps.<id>.headers.<name>`
 * - `account.id`, `account.secretKey`, `account.webhookSecret`, `account.name`
 * - `receiver.url`, `baseUrl`, `env.NAME`, `run.id`, `scenario.name`, `scenario.file`
 *
 * A string that is exactly one `{{ path }}` becomes the value itself (a number stays a
 * number, an object an object); otherwise each `{{ path }}` is replaced by its text
 * (objects as JSON). Paths use dots and `[n]` (or `.n`) for array items.
 */

export type TemplateContext = Record<string, unknown>;

export class TemplateError extends Error {}

const ONE = /^\s*\{\{\s*([^{}]*?)\s*\}\}\s*$/;
const ANY = /\{\{\s*([^{}]*?)\s*\}\}/g;

/** `steps.buy.response.items[0].id` → ['steps', 'buy', 'response', 'items', '0', 'id']. */
export function parsePath(expression: string): string[] {
  const trimmed = expression.trim();
  if (!/^[A-Za-z_$][\w$-]*(?:\.[\w$-]+|\[\d+\])*$/.test(trimmed)) {
    throw new TemplateError(`{{ ${expression} }} is not a path (use names separated by dots, e.g. steps.buy.response.id)`);
  }
  return trimmed
    .replace(/\[(\d+)\]/g, '.$1')
    .split('.')
    .filter((part) => part !== '');
}

const keysOf = (value: unknown): string =>
  Array.isArray(value)
    ? `an array of ${value.length}`
    : value !== null && typeof value === 'object'
      ? `keys: ${Object.keys(value).slice(0, 12).join(', ') || 'none'}`
      : `a ${value === null ? 'null' : typeof value}`;

/** The value at `expression`; a missing part is an error that says what is there instead. */
export function resolve(expression: string, context: TemplateContext): unknown {
  const parts = parsePath(expression);
  let value: unknown = context;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] as string;
    const here = parts.slice(0, i).join('.');
    if (i === 1 && parts[0] === 'env') {
      const env = value as Record<string, unknown>;
      if (typeof env[part] !== 'string') throw new TemplateError(`{{ ${expression} }}: environment variable ${part} is not set`);
    }
    if (i === 1 && parts[0] === 'steps' && (value === null || typeof value !== 'object' || !(part in value))) {
      const known = Object.keys((value ?? {}) as object);
      throw new TemplateError(`{{ ${expression} }}: no step with id "${part}" has run before this one (${known.length ? `ids so far: ${known.join(', ')}` : 'none has an id yet'})`);
    }
    if (Array.isArray(value) && /^\d+$/.test(part)) {
      if (Number(part) >= value.length) throw new TemplateError(`{{ ${expression} }}: ${here} has ${value.length} item(s), no [${part}]`);
      value = value[Number(part)];
    } else if (value !== null && typeof value === 'object' && !Array.isArray(value) && part in value) {
      value = (value as Record<string, unknown>)[part];
    } else {
      throw new TemplateError(`{{ ${expression} }}: ${here || 'the context'} has no "${part}" (${keysOf(value)})`);
    }
  }
  return value;
}

const text = (value: unknown): string => (typeof value === 'string' ? value : value === undefined ? '' : JSON.stringify(value));

export function renderString(input: string, context: TemplateContext): unknown {
  const whole = ONE.exec(input);
  if (whole) return resolve(whole[1] ?? '', context);
  if (!input.includes('{{')) return input;
  return input.replace(ANY, (_match, expression: string) => text(resolve(expression, context)));
}

/** Renders every string inside `value` (keys are left as written). */
export function render(value: unknown, context: TemplateContext): unknown {
  if (typeof value === 'string') return renderString(value, context);
  if (Array.isArray(value)) return value.map((item) => render(item, context));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, render(v, context)]));
  }
  return value;
}

/** Every `{{ steps.<id>… }}` id used inside `value`, for the loader's checks. */
export function stepRefs(value: unknown, found: string[] = []): string[] {
  if (typeof value === 'string') {
    for (const match of value.matchAll(ANY)) {
      const ref = /^steps\.([A-Za-z_][\w-]*)/.exec((match[1] ?? '').trim());
      if (ref?.[1]) found.push(ref[1]);
    }
  } else if (Array.isArray(value)) {
    for (const item of value) stepRefs(item, found);
  } else if (value !== null && typeof value === 'object') {
    for (const item of Object.values(value)) stepRefs(item, found);
  }
  return found;
}

/** Template paths that do not parse, for the loader's checks. */
export function badTemplates(value: unknown, found: string[] = []): string[] {
  if (typeof value === 'string') {
    for (const match of value.matchAll(ANY)) {
      try {
        parsePath(match[1] ?? '');
      } catch (error) {
        found.push((error as Error).message);
      }
    }
  } else if (Array.isArray(value)) {
    for (const item of value) badTemplates(item, found);
  } else if (value !== null && typeof value === 'object') {
    for (const item of Object.values(value)) badTemplates(item, found);
  }
  return found;
}
