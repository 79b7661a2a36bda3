import { systemClock } from '../../clock.js';
import { StepFailure } from '../failure.js';
import { formatMs, toMs } from '../duration.js';
import { match } from '../match.js';
import type { Duration } from '../types.js';
import type { CallDefinition, Params, ScenarioState, StepDefinition, StepRecord } from './context.js';
import { call, callStep, checkAnswer, keyOf, recordOf, sleep, str } from './context.js';

/** A valid key of each type, the default of a cashOut step (none of them a magic key: paid out). */
export const DEFAULT_PIX_KEYS: Readonly<Record<string, string>> = {
  CPF: '52998224725',
  CNPJ: '11222333000181',
  PHONE: '+5511987654321',
  EMAIL: 'seller@example.com',
  EVP: '3f1c2a9e-8b7d-4c6e-9a1f-2b3c4d5e6f70',
};

/** The body a cashOut step sends: amount 1000 and an EVP key by default, the step's fields over them. */
export function cashOutBody(p: Params): Record<string, unknown> {
  const pixType = str(p.pixType) ?? 'EVP';
  return {
    amount: p.amount ?? 1000,
    pixType,
    pixKey: p.pixKey ?? DEFAULT_PIX_KEYS[pixType] ?? DEFAULT_PIX_KEYS.EVP,
    ...(p.document !== undefined && { document: p.document }),
    ...(p.externalId !== undefined && { externalId: p.externalId }),
    ...(p.postbackUrl !== undefined && { postbackUrl: p.postbackUrl }),
  };
}

/** The withdrawal a step acts on: its own `withdrawal`, else the most recent cashOut's. */
export function withdrawalOf(params: Params, state: ScenarioState): string {
  const id = str(params.withdrawal) ?? state.lastWithdrawalId;
  if (id === undefined) throw new StepFailure('no withdrawal to act on: give "withdrawal:" or run a cashOut step first');
  return id;
}

/**
 * POST /withdraws/cash-out; `fund` first credits the balance (POST /_sandbox/balance/credit).
 * Later steps use this withdrawal by default.
 */
export const cashOutCall: CallDefinition = {
  title: (p) => {
    const body = cashOutBody(p);
    return `cashOut ${String(body.amount)} to ${String(body.pixType)} ${String(body.pixKey)}${p.fund !== undefined ? ` (funded ${String(p.fund)})` : ''}`;
  },
  defaultStatus: 201,
  async prepare(p, state) {
    const key = keyOf(p, state);
    if (p.fund !== undefined) {
      const funded = await call(state, { method: 'POST', path: '/_sandbox/balance/credit', body: { amount: p.fund }, key });
      checkAnswer(funded, undefined, 200);
    }
    return { method: 'POST', path: '/withdraws/cash-out', body: cashOutBody(p), key };
  },
  onSuccess(exchange, state) {
    const id = (exchange.responseBody as { id?: unknown } | undefined)?.id;
    if (typeof id === 'string') state.lastWithdrawalId = id;
  },
};

export const cashOutStep = callStep(cashOutCall);

/** Reads an answer again and again until it matches `expected`, or fails at the deadline. */
async function readUntil(state: ScenarioState, path: string, p: Params, expected: Record<string, unknown>, what: (body: unknown) => string): Promise<StepRecord> {
  const withinMs = p.within !== undefined ? toMs(p.within as Duration) : 0;
  const deadline = systemClock.nowMs() + withinMs;
  for (;;) {
    const read = await call(state, { method: 'GET', path, key: keyOf(p, state) });
    state.exchanges.splice(0, state.exchanges.length - 1);
    checkAnswer(read, undefined, 200);
    const mismatches = match(expected, read.responseBody);
    if (mismatches.length === 0) return recordOf(read);
    if (systemClock.nowMs() >= deadline) {
      throw new StepFailure(`${what(read.responseBody)} does not match (${mismatches.length} difference${mismatches.length > 1 ? 's' : ''})${withinMs ? ` within ${formatMs(withinMs)}` : ''}`, {
        mismatches,
        exchange: read,
      });
    }
    await sleep(Math.min(50, Math.max(0, deadline - systemClock.nowMs())));
  }
}

/** GET /withdraws/collect/:id (or by externalId) and matches `status` and `fields`; `within` keeps reading. */
export const expectWithdrawalStep: StepDefinition = {
  title: (p) => {
    const which = p.externalId !== undefined ? ` externalId ${str(p.externalId)}` : p.withdrawal !== undefined ? ` ${str(p.withdrawal)}` : '';
    return `expectWithdrawal${which}${p.status !== undefined ? ` ${str(p.status)}` : ''}`;
  },
  run(p, state) {
    const path =
      p.externalId !== undefined
        ? `/withdraws/collect/${encodeURIComponent(String(p.externalId))}?searchBy=externalId`
        : `/withdraws/collect/${encodeURIComponent(withdrawalOf(p, state))}`;
    const expected = { ...(p.status !== undefined && { status: p.status }), ...((p.fields ?? {}) as Record<string, unknown>) };
    return readUntil(state, path, p, expected, (body) => `withdrawal ${String((body as { withdrawalId?: unknown }).withdrawalId)}`);
  },
};

const FIGURES = ['balance', 'pendingBalance', 'garanteeBalance', 'precautionaryBlock'] as const;

/** GET /users/balance and matches the figures given (numbers or matchers); `within` keeps reading. */
export const expectBalanceStep: StepDefinition = {
  title: (p) => `expectBalance${FIGURES.filter((f) => p[f] !== undefined).map((f) => ` ${f} ${typeof p[f] === 'object' ? JSON.stringify(p[f]) : String(p[f])}`).join('')}`,
  run(p, state) {
    const expected = Object.fromEntries(FIGURES.filter((f) => p[f] !== undefined).map((f) => [f, p[f]]));
    return readUntil(state, '/users/balance', p, expected, () => 'the balance');
  },
};
