/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import type { View } from './context.js';
import { type Child, h, replaceChildren, unavailable } from './dom.js';

/** A rule as `GET /_sandbox/faults` answers it (FaultRuleState). */
interface Rule {
  id: string;
  match: { operation?: string; method?: string; path?: string; event?: string };
  action: Record<string, unknown>;
  times?: number;
  probability?: number;
  fired: number;
}

/** A rule as `PUT /_sandbox/faults` takes it: `fired` is the server's count, not sent back. */
const writable = ({ fired: _fired, ...rule }: Rule): Omit<Rule, 'fired'> => rule;

/** Operations an integration calls most, offered as suggestions; any operationId of openapi.yaml is accepted. */
const OPERATIONS = ['createPurchase', 'getTransaction', 'createProduct', 'listProducts', 'getProduct', 'updateProduct', 'createOffer', 'listProductOffers', 'webhook'];

/** The actions the add form offers, with the field each one needs. */
const ACTIONS: readonly { value: string; label: string; needs: 'status' | 'amount' | null; amountLabel?: string; webhook: boolean }[] = [
  { value: 'status', label: 'Answer an error', needs: 'status', webhook: false },
  { value: 'afterCommit', label: 'Error after the change is made', needs: 'status', webhook: false },
  { value: 'latencyMs', label: 'Add latency', needs: 'amount', amountLabel: 'Milliseconds', webhook: false },
  { value: 'timeout', label: 'Never answer (timeout)', needs: null, webhook: false },
  { value: 'reset', label: 'Reset the connection', needs: null, webhook: false },
  { value: 'duplicate', label: 'Webhook: send extra copies', needs: 'amount', amountLabel: 'Extra copies', webhook: true },
  { value: 'delayMs', label: 'Webhook: delay', needs: 'amount', amountLabel: 'Milliseconds', webhook: true },
  { value: 'badSignature', label: 'Webhook: bad signature', needs: null, webhook: true },
  { value: 'outOfOrder', label: 'Webhook: out of order', needs: null, webhook: true },
];
const STATUSES = ['500', '502', '503', '504', '429'];

function describeMatch(m: Rule['match']): string {
  const parts = [m.operation, m.method, m.path, m.event && `event ${m.event}`].filter(Boolean);
  return parts.length ? parts.join(' · ') : 'every API and control request';
}

function describeAction(a: Record<string, unknown>): string {
  if ('status' in a) return `answer ${String(a.status)}${a.retryAfter !== undefined ? ` (Retry-After ${String(a.retryAfter)} s)` : ''}`;
  if ('afterCommit' in a) return `make the change, then answer ${String((a.afterCommit as { status?: unknown }).status)}`;
  if ('latencyMs' in a) return `wait ${String(a.latencyMs)} ms, then proceed`;
  if ('timeout' in a) return 'never answer';
  if ('reset' in a) return 'reset the connection';
  if ('duplicate' in a) return `send ${String(a.duplicate)} extra cop${a.duplicate === 1 ? 'y' : 'ies'}`;
  if ('delayMs' in a) return `delay ${String(a.delayMs)} ms (account clock)`;
  if ('badSignature' in a) return 'send a wrong x-signature';
  if ('outOfOrder' in a) return 'hold until the next delivery was answered';
  return JSON.stringify(a);
}

function limits(rule: Rule): string {
  const parts = [rule.times !== undefined ? `at most ${rule.times}×` : 'no limit', rule.probability !== undefined ? `probability ${rule.probability}` : null];
  return parts.filter(Boolean).join(' · ');
}

/** The account's fault rules: a list with delete buttons, a form to add one, and the whole set as JSON. */
export const faultsView: View = (ctx) => {
  let rules: Rule[] = [];
  const list = h('div', { class: 'stack', id: 'fault-rules' });

  async function put(next: Omit<Rule, 'fired'>[], what: string): Promise<boolean> {
    const answer = await ctx.api.put<{ rules: Rule[] }>('/_sandbox/faults', { rules: next });
    if (!answer.ok) {
      ctx.fail(what, answer);
      return false;
    }
    ctx.notify(`${what}: ${answer.body.rules.length} rule${answer.body.rules.length === 1 ? '' : 's'} in effect`, 'ok');
    show(answer.body.rules);
    return true;
  }

  function card(rule: Rule): HTMLElement {
    const remove = h('button', { type: 'button', class: 'secondary', 'aria-label': `Delete rule ${rule.id}` }, 'Delete');
    remove.addEventListener('click', () => void put(rules.filter((r) => r !== rule).map(writable), `Rule ${rule.id} deleted`));
    return h(
      'article',
      { class: 'card fault-rule', 'data-rule': rule.id },
      h('div', { class: 'card-head' }, h('h3', { class: 'mono id' }, rule.id), h('span', { class: 'row' }, h('span', { class: `badge ${rule.fired ? 'warn' : 'muted'}` }, `fired ${rule.fired}×`), remove)),
      h('p', { class: 'meta wrap' }, h('strong', {}, 'When: '), describeMatch(rule.match)),
      h('p', { class: 'meta' }, h('strong', {}, 'Then: '), describeAction(rule.action), ' · ', limits(rule)),
    );
  }

  function show(next: Rule[]): void {
    rules = next;
    editor.value = JSON.stringify(next.map(writable), null, 2);
    replaceChildren(list, next.length === 0 ? h('p', { class: 'empty' }, 'No fault rules: the sandbox behaves.') : next.map(card));
    // Nothing to clear: the button says so rather than answering a click with nothing.
    clear.disabled = next.length === 0;
    clear.title = next.length === 0 ? 'No rules to clear' : '';
  }

  // The add form: fields that do not apply to the chosen operation or action are hidden.
  const field = (id: string, label: string, control: HTMLElement): HTMLElement => h('div', { class: 'field' }, h('label', { for: id }, label), control);
  const operation = h('input', { id: 'fault-operation', type: 'text', list: 'fault-operations', placeholder: 'any', autocomplete: 'off' });
  const datalist = h('datalist', { id: 'fault-operations' }, OPERATIONS.map((o) => h('option', { value: o })));
  const method = h('select', { id: 'fault-method' }, h('option', { value: '' }, 'Any'), ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].map((m) => h('option', { value: m }, m)));
  const path = h('input', { id: 'fault-path', type: 'text', placeholder: '/transactions/*', autocomplete: 'off' });
  const event = h('input', { id: 'fault-event', type: 'text', placeholder: 'cashin.paid', autocomplete: 'off' });
  const action = h('select', { id: 'fault-action' }, ACTIONS.map((a) => h('option', { value: a.value }, a.label)));
  const status = h('select', { id: 'fault-status' }, STATUSES.map((s) => h('option', { value: s, selected: s === '503' }, s)));
  const amountLabel = h('label', { for: 'fault-amount' }, 'Milliseconds');
  const amount = h('input', { id: 'fault-amount', type: 'number', min: 0, step: 1, inputmode: 'numeric', value: 1000 });
  const times = h('input', { id: 'fault-times', type: 'number', min: 1, step: 1, inputmode: 'numeric', placeholder: 'no limit' });
  const probability = h('input', { id: 'fault-probability', type: 'number', min: 0, max: 1, step: 'any', placeholder: '1' });
  const ruleId = h('input', { id: 'fault-id', type: 'text', placeholder: 'automatic', autocomplete: 'off', pattern: '[A-Za-z0-9_.:\\-]{1,64}' });
  const requestFields = [field('fault-method', 'Method', method), field('fault-path', 'Path', path)];
  const eventField = field('fault-event', 'Event', event);
  const statusField = field('fault-status', 'Status', status);
  const amountField = h('div', { class: 'field' }, amountLabel, amount);
  const sync = (): void => {
    const webhook = operation.value.trim() === 'webhook';
    for (const f of requestFields) f.hidden = webhook;
    eventField.hidden = !webhook;
    for (const option of action.options) option.hidden = ACTIONS.find((a) => a.value === option.value)?.webhook !== webhook;
    if (action.selectedOptions[0]?.hidden) action.value = ACTIONS.find((a) => a.webhook === webhook)?.value ?? '';
    const chosen = ACTIONS.find((a) => a.value === action.value);
    statusField.hidden = chosen?.needs !== 'status';
    amountField.hidden = chosen?.needs !== 'amount';
    amountLabel.textContent = chosen?.amountLabel ?? 'Amount';
  };
  operation.addEventListener('input', sync);
  action.addEventListener('change', sync);
  const add = h(
    'form',
    { class: 'card fault-form', 'aria-labelledby': 'fault-add-h' },
    h('h2', { id: 'fault-add-h' }, 'Add a rule'),
    h('div', { class: 'fields' }, field('fault-operation', 'Operation', operation), datalist, requestFields, eventField, field('fault-action', 'Action', action), statusField, amountField, field('fault-times', 'Times', times), field('fault-probability', 'Probability', probability), field('fault-id', 'Rule id', ruleId)),
    h('div', { class: 'row buttons' }, h('button', { type: 'submit' }, 'Add rule')),
  );
  add.addEventListener('submit', (e) => {
    e.preventDefault();
    const match: Rule['match'] = {};
    const op = operation.value.trim();
    if (op) match.operation = op;
    if (op === 'webhook') {
      if (event.value.trim()) match.event = event.value.trim();
    } else {
      if (method.value) match.method = method.value;
      if (path.value.trim()) match.path = path.value.trim();
    }
    const kind = action.value;
    const needs = ACTIONS.find((a) => a.value === kind)?.needs;
    const actionBody: Record<string, unknown> =
      kind === 'afterCommit' ? { afterCommit: { status: Number(status.value) } } : { [kind]: needs === 'status' ? Number(status.value) : needs === 'amount' ? Number(amount.value) : true };
    // A rule without an id would be named after its position, which can collide with a kept rule's name.
    const taken = new Set(rules.map((r) => r.id));
    let id = ruleId.value.trim();
    for (let n = rules.length + 1; !id || taken.has(id); n++) id = `rule-${n}`;
    const rule: Omit<Rule, 'fired'> = { id, match, action: actionBody };
    if (times.value) rule.times = Number(times.value);
    if (probability.value) rule.probability = Number(probability.value);
    void put([...rules.map(writable), rule], `Rule ${id} added`).then((ok) => {
      if (!ok) return;
      add.reset();
      sync();
    });
  });

  // The whole set as JSON, for what the form does not cover (retryAfter, reordering rules).
  const editor = h('textarea', { id: 'faults-json', rows: 10, spellcheck: 'false', class: 'code' });
  const error = h('p', { class: 'error', role: 'alert' });
  const json = h(
    'form',
    { class: 'stack' },
    h('label', { for: 'faults-json' }, 'Rules (JSON array)'),
    editor,
    error,
    h('div', { class: 'row buttons' }, h('button', { type: 'submit' }, 'Save rules')),
  );
  json.addEventListener('submit', (e) => {
    e.preventDefault();
    let next: unknown;
    try {
      next = JSON.parse(editor.value || '[]');
    } catch (err) {
      error.textContent = `Not valid JSON: ${(err as Error).message}`;
      return;
    }
    error.textContent = '';
    void put(next as Omit<Rule, 'fired'>[], 'Fault rules saved');
  });
  const clear = h('button', { type: 'button', class: 'secondary', id: 'faults-clear', disabled: true }, 'Clear all');
  clear.addEventListener('click', async () => {
    const answer = await ctx.api.delete<{ rules: Rule[] }>('/_sandbox/faults');
    if (!answer.ok) return ctx.fail('Clearing fault rules', answer);
    ctx.notify('Fault rules cleared', 'ok');
    show(answer.body.rules);
  });

  const body: Child[] = [
    h('div', { class: 'card-head' }, h('h2', {}, 'Rules in effect'), clear),
    h('p', { class: 'muted small' }, 'Tried in order; the first that matches fires. Saving the rules starts every count again at 0.'),
    list,
    add,
    h('details', { class: 'card' }, h('summary', {}, 'Edit all rules as JSON'), json),
  ];
  replaceChildren(
    ctx.root,
    h('h1', { tabindex: -1 }, 'Fault rules'),
    h('p', { class: 'muted' }, 'Make the sandbox misbehave on purpose to test an integration\'s error handling: errors, latency, timeouts, resets, errors after commit, and duplicated, delayed, badly signed or reordered webhooks. Fired faults show in the request log and the webhook log with the rule\'s id.'),
    h('section', { class: 'stack', 'aria-label': 'Fault rules' }, body),
  );
  sync();
  void (async () => {
    const answer = await ctx.api.get<{ rules: Rule[] }>('/_sandbox/faults');
    if (answer.missing) return replaceChildren(ctx.root, h('h1', { tabindex: -1 }, 'Fault rules'), unavailable('Fault rules'));
    if (!answer.ok) return ctx.fail('Loading fault rules', answer);
    show(answer.body.rules);
  })();
};
