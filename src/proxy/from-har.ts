import { stringify } from 'yaml';
import { expectationOf } from './drift-compare.js';
import { Carried, FOREIGN_KEY, renderTemplate, type PlanStep, type ReplayPlan, type Template } from './drift-plan.js';
import { responseSchema } from './drift-run.js';

/**
 * A replay plan as a scenario file (scenarios/README.md): each replayed exchange a `request`
 * step expecting the recorded status and the recorded answer's shape (expectationOf: the
 * drift comparison's rules as matchers), each carried value a `{{ steps.eN.response… }}`
 * template of the step that captured it, each driven state a control request.
 */

const stepId = (entry: number): string => `e${entry}`;

/** `{{ steps.e1.response.data[0].id }}` for a pointer; undefined when a key cannot be said in a template path. */
function templateOf(value: Carried): string | undefined {
  const parts = value.pointer
    .split('/')
    .slice(1)
    .map((raw) => raw.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (!parts.every((part) => /^[\w$-]+$/.test(part))) return undefined;
  const path = parts.map((part) => (/^\d+$/.test(part) ? `[${part}]` : `.${part}`)).join('');
  return `{{ steps.${stepId(value.entry)}.response${path} }}`;
}

const said = (value: Carried): string => templateOf(value) ?? value.recorded;
const pathOf = (path: ReadonlyArray<string | Carried>): string => `/${path.map((part) => (part instanceof Carried ? said(part) : part)).join('/')}`;
const bodyOf = (body: Template): unknown => renderTemplate(body, said);

function stepOf(step: PlanStep, captured: ReadonlySet<number>): Record<string, unknown> {
  if (step.kind === 'webhook') {
    const filter = step.id === undefined ? {} : { [step.resource]: said(step.id) };
    return { name: `#${step.entry} webhook ${step.event}`, expectWebhook: { ...filter, body: expectationOf(step.body, step.schema, { status: 200, sent: {} }) } };
  }
  if (step.kind === 'control') {
    return { name: `drive: ${step.reason}, as the recording shows at entry ${step.entry}`, request: { method: step.method, path: pathOf(step.path), ...(step.body !== undefined && { body: bodyOf(step.body) }) } };
  }
  const query = step.query.length > 0 ? Object.fromEntries(step.query.map(([name, value]) => [name, value instanceof Carried ? said(value) : value])) : undefined;
  const schema = responseSchema(step, step.status);
  const request = {
    method: step.method,
    path: pathOf(step.path),
    ...(query !== undefined && { query }),
    ...(step.body !== undefined && { body: bodyOf(step.body) }),
    ...(!step.authorized ? { key: null } : step.status === 401 ? { key: FOREIGN_KEY } : {}),
    expect: { status: step.status, ...(step.response !== undefined && { body: expectationOf(step.response, schema, { status: step.status, sent: step.sent }) }) },
  };
  return { ...(captured.has(step.entry) && { id: stepId(step.entry) }), name: `#${step.entry} ${step.method} ${step.recordedPath}`, request };
}

/** The scenario file's text. */
export function scenarioFromPlan(plan: ReplayPlan, file: string): string {
  const captured = new Set(plan.captured);
  const scenario = {
    name: `Session recorded in ${file}`,
    description: `Written by payments-sandbox scenario from-har: the recorded exchanges in order, the values the session carried as captures, the states the real side reached on its own as control calls, each answer expected in the recorded shape (exact values where the client chose them or the spec fixes them).${plan.webhooks.length > 0 ? ` The recorded webhooks (${plan.webhooks.map((n) => `#${n}`).join(', ')}) are expected of the sandbox's own, at the end.` : ''}`,
    // The webhooks last, as drift compares them: one recorded before the answer that caused it is delivered by then.
    steps: [...plan.steps.filter((step) => step.kind !== 'webhook'), ...plan.steps.filter((step) => step.kind === 'webhook')].map((step) => stepOf(step, captured)),
  };
  return `# Generated from ${file} by payments-sandbox scenario from-har.\n${stringify(scenario, { lineWidth: 0, aliasDuplicateObjects: false })}`;
}
