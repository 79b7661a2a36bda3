import { createHash } from 'node:crypto';
import { invalid } from '../errors.js';
import { compileGlob, globMatches, globProblem } from './glob.js';
import type { OpenApiDocument } from '../spec/openapi.js';
import type { components } from '../spec/openapi-types.js';
import type { ReadTable, Repository, TableSpec, Unit, UnitOfWork } from '../store/ports.js';

export type FaultRule = components['schemas']['FaultRule'];
export type FaultRules = components['schemas']['FaultRules'];
export type FaultAction = components['schemas']['FaultAction'];
export type FaultRuleState = components['schemas']['FaultRuleState'];
export type FaultRulesState = components['schemas']['FaultRulesState'];

/** `match.operation` of the rules that act on webhook delivery attempts. */
export const WEBHOOK_OPERATION = 'webhook';

/**
 * Operations a fault never touches: the ones a developer needs to see and undo the faults
 * (a 503 on everything must not lock them out of DELETE /_sandbox/faults).
 */
export const EXEMPT_OPERATIONS: ReadonlySet<string> = new Set([
  'getFaults',
  'setFaults',
  'clearFaults',
  'listRequests',
  'listUnauthenticatedRequests',
  'getSandboxAccount',
  'getHealth',
  'getEventStream',
]);

const HTTP_ACTIONS = ['status', 'latencyMs', 'timeout', 'reset', 'afterCommit'] as const;
const WEBHOOK_ACTIONS = ['duplicate', 'delayMs', 'badSignature', 'outOfOrder'] as const;

/** A delivery whose attempt a delay or outOfOrder rule postponed: the next attempt goes out as is. */
interface Held {
  ruleId: string;
  kind: 'delay' | 'outOfOrder';
}

interface StoredRule extends FaultRuleState {
  /** Matching requests seen so far: the index of the next probability draw. */
  seen: number;
}

interface AccountFaults {
  /** The account id: one record per account. */
  id: string;
  accountId: string;
  rules: StoredRule[];
  held: Record<string, Held>;
}

export const FAULTS: TableSpec<AccountFaults> = { name: 'faults', settings: { account: 'accountId' } };

export interface FaultsOptions {
  repository: Repository;
  /** Seeds the probability draws: the same rules and requests fire the same faults in every run. */
  seed: number;
  /** What `match.operation` may name. */
  operationIds: ReadonlySet<string>;
}

/** A rule that fired, and what it does. */
export interface Fired {
  ruleId: string;
  action: FaultAction;
}

/** What a webhook attempt should do: postpone it, or send it changed (or as is, naming the rule that held it). */
export type WebhookFault =
  | { ruleId: string; postponeMs: number }
  | { ruleId: string; duplicate?: number; badSignature?: boolean };

/** How long an outOfOrder rule holds an attempt at most when no other delivery overtakes it. */
export const OUT_OF_ORDER_HOLD_MS = 60_000;

/**
 * Per-account fault rules, stored with their counters so that `times` and the seeded
 * `probability` draws continue where they were after a restart. Deciding never changes
 * anything but these counters: a fault is applied by the router (HTTP) or by the webhook
 * deliveries, before any change unless it is an afterCommit.
 */
export class Faults {
  private readonly records: ReadTable<AccountFaults>;
  private readonly units: UnitOfWork;
  private readonly seed: number;
  private readonly operationIds: ReadonlySet<string>;

  constructor(options: FaultsOptions) {
    this.records = options.repository.table(FAULTS);
    this.units = options.repository.units;
    this.seed = options.seed;
    this.operationIds = options.operationIds;
  }

  async state(accountId: string): Promise<FaultRulesState> {
    return stateOf(await this.records.get(accountId, accountId));
  }

  async set(unit: Unit, accountId: string, input: FaultRules): Promise<FaultRulesState> {
    const rules = input.rules.map((rule, index) => this.checked(rule, index));
    const ids = new Set<string>();
    for (const rule of rules) {
      if (ids.has(rule.id)) throw invalid(`rules: the id ${rule.id} is used twice`);
      ids.add(rule.id);
    }
    return this.change(unit, accountId, (current) => ({ id: accountId, accountId, rules, held: current?.held ?? {} }));
  }

  clear(unit: Unit, accountId: string): Promise<FaultRulesState> {
    // Held deliveries keep their marker, so their postponed attempt is still sent as is.
    return this.change(unit, accountId, (current) => (current && Object.keys(current.held).length > 0 ? { ...current, rules: [] } : null));
  }

  /** The HTTP rule that fires for this request, if any; counts it as fired unless it is an afterCommit (see `confirm`). */
  async forRequest(accountId: string, operationId: string, method: string, path: string): Promise<Fired | undefined> {
    if (EXEMPT_OPERATIONS.has(operationId)) return undefined;
    // Most accounts have no rules: no unit, no lock.
    if (!hasRules(await this.records.get(accountId, accountId))) return undefined;
    return this.units.run(async (unit) => {
      const fired = await this.draw(unit, accountId, (rule) => {
        const m = rule.match;
        return (
          m.operation !== WEBHOOK_OPERATION &&
          (m.operation === undefined || m.operation === operationId) &&
          (m.method === undefined || m.method === method.toUpperCase()) &&
          (m.path === undefined || pathMatches(m.path, path))
        );
      });
      if (fired && !('afterCommit' in fired.action)) await this.fired(unit, accountId, fired.ruleId);
      return fired;
    });
  }

  /** Counts a rule as fired once the change it followed was made (an afterCommit), in a unit of its own. */
  confirm(accountId: string, ruleId: string): Promise<void> {
    return this.units.run((unit) => this.fired(unit, accountId, ruleId));
  }

  /** The fault of an automatic webhook attempt, if any; what it uses up is changed in `unit`. */
  async forWebhookAttempt(unit: Unit, accountId: string, deliveryId: string, event: string): Promise<WebhookFault | undefined> {
    if (!hasRules(await this.records.get(accountId, accountId))) return undefined;
    const faults = unit.table(FAULTS);
    const record = await faults.getForUpdate(accountId, accountId);
    const held = record?.held[deliveryId];
    if (record && held) {
      const { [deliveryId]: _released, ...rest } = record.held;
      await faults.put({ ...record, held: rest });
      return { ruleId: held.ruleId };
    }
    const fired = await this.draw(unit, accountId, (rule) => rule.match.operation === WEBHOOK_OPERATION && (rule.match.event === undefined || rule.match.event === event));
    if (!fired) return undefined;
    await this.fired(unit, accountId, fired.ruleId);
    const action = fired.action;
    if ('delayMs' in action || 'outOfOrder' in action) {
      const kind = 'delayMs' in action ? 'delay' : 'outOfOrder';
      await this.change(unit, accountId, (current) => current && { ...current, held: { ...current.held, [deliveryId]: { ruleId: fired.ruleId, kind } } });
      return { ruleId: fired.ruleId, postponeMs: 'delayMs' in action ? action.delayMs : OUT_OF_ORDER_HOLD_MS };
    }
    if ('duplicate' in action) return { ruleId: fired.ruleId, duplicate: action.duplicate };
    if ('badSignature' in action) return { ruleId: fired.ruleId, badSignature: true };
    return undefined;
  }

  /** Forgets a held delivery that will not be attempted any more. */
  async drop(unit: Unit, accountId: string, deliveryId: string): Promise<void> {
    const found = await unit.table(FAULTS).get(accountId, accountId);
    if (!found?.held[deliveryId]) return;
    await this.change(unit, accountId, (record) => {
      if (!record?.held[deliveryId]) return record;
      const { [deliveryId]: _dropped, ...rest } = record.held;
      return { ...record, held: rest };
    });
  }

  /** Deliveries held by an outOfOrder rule, other than `except`: another attempt overtook them, they may go now. */
  async overtaken(unit: Unit, accountId: string, except: string): Promise<string[]> {
    const held = (await unit.table(FAULTS).get(accountId, accountId))?.held ?? {};
    return Object.entries(held)
      .filter(([id, h]) => id !== except && h.kind === 'outOfOrder')
      .map(([id]) => id);
  }

  private async fired(unit: Unit, accountId: string, ruleId: string): Promise<void> {
    await this.change(unit, accountId, (record) => record && { ...record, rules: record.rules.map((r) => (r.id === ruleId ? { ...r, fired: r.fired + 1 } : r)) });
  }

  /** Reads the account's record under lock and stores what `next` makes of it (null: removed; unchanged: nothing written). */
  private async change(unit: Unit, accountId: string, next: (current: AccountFaults | undefined) => AccountFaults | null | undefined): Promise<FaultRulesState> {
    const faults = unit.table(FAULTS);
    const current = await faults.getForUpdate(accountId, accountId);
    const updated = next(current);
    if (updated === null) {
      await faults.delete(accountId, accountId);
      return stateOf(undefined);
    }
    if (updated !== undefined && updated !== current) await faults.put(updated);
    return stateOf(updated);
  }

  /** Rules that passed the schema still need what it cannot say: known operations, and actions that fit them. */
  private checked(rule: FaultRule, index: number): StoredRule {
    const id = rule.id ?? `rule-${index + 1}`;
    const where = `rules[${index}]`;
    const match = rule.match ?? {};
    const webhook = match.operation === WEBHOOK_OPERATION;
    if (match.operation !== undefined && !webhook) {
      if (!this.operationIds.has(match.operation)) {
        throw invalid(`${where}.match.operation ${match.operation} is not an operationId of openapi.yaml (or "webhook")`);
      }
      if (EXEMPT_OPERATIONS.has(match.operation)) throw invalid(`${where}.match.operation ${match.operation} cannot be faulted`);
    }
    if (webhook && (match.method !== undefined || match.path !== undefined)) {
      throw invalid(`${where}.match: a webhook rule matches by event, not by method or path`);
    }
    if (!webhook && match.event !== undefined) throw invalid(`${where}.match.event is only for operation: webhook`);
    const tooComplex = match.path === undefined ? undefined : globProblem(match.path);
    if (tooComplex) throw invalid(`${where}.match.path ${tooComplex}`);
    const kind = [...HTTP_ACTIONS, ...WEBHOOK_ACTIONS].find((k) => k in rule.action) ?? '';
    const allowed: readonly string[] = webhook ? WEBHOOK_ACTIONS : HTTP_ACTIONS;
    if (!allowed.includes(kind)) {
      throw invalid(
        webhook
          ? `${where}.action: a webhook rule takes duplicate, delayMs, badSignature or outOfOrder`
          : `${where}.action: ${kind} is for operation: webhook; a request rule takes status, latencyMs, timeout, reset or afterCommit`,
      );
    }
    const stored: StoredRule = { id, match, action: rule.action, fired: 0, seen: 0 };
    if (rule.times !== undefined) stored.times = rule.times;
    if (rule.probability !== undefined) stored.probability = rule.probability;
    return stored;
  }

  /**
   * The first rule that matches, is not used up and passes its probability draw. A draw
   * is a hash of (seed, rule id, how many matching requests it saw): the same rules and
   * requests fire the same faults in every run, on any account, after a restart too.
   */
  private async draw(unit: Unit, accountId: string, matches: (rule: StoredRule) => boolean): Promise<Fired | undefined> {
    const record = await unit.table(FAULTS).getForUpdate(accountId, accountId);
    if (!record || record.rules.length === 0) return undefined;
    let rules = record.rules;
    let fired: Fired | undefined;
    for (const rule of record.rules) {
      if (!matches(rule) || (rule.times !== undefined && rule.fired >= rule.times)) continue;
      if (rule.probability !== undefined) {
        const sample = uniform(this.seed, rule.id, rule.seen);
        rules = rules.map((r) => (r.id === rule.id ? { ...r, seen: r.seen + 1 } : r));
        if (sample >= rule.probability) continue;
      }
      fired = { ruleId: rule.id, action: rule.action };
      break;
    }
    if (rules !== record.rules) await unit.table(FAULTS).put({ ...record, rules });
    return fired;
  }
}

const hasRules = (record: AccountFaults | undefined): boolean => record !== undefined && (record.rules.length > 0 || Object.keys(record.held).length > 0);

function stateOf(record: AccountFaults | undefined): FaultRulesState {
  return { rules: (record?.rules ?? []).map(({ seen: _seen, ...rule }) => rule) };
}

/** Every operationId of the document: what `match.operation` may name. */
export function operationIdsOf(document: OpenApiDocument): Set<string> {
  const ids = new Set<string>();
  for (const item of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(item ?? {})) {
      const id: unknown = operation !== null && typeof operation === 'object' ? (operation as { operationId?: unknown }).operationId : undefined;
      if (typeof id === 'string') ids.add(id);
    }
  }
  return ids;
}

/** Uniform in [0, 1) from the first 32 bits of a SHA-256. */
function uniform(seed: number, ruleId: string, n: number): number {
  return createHash('sha256').update(`${seed}:${ruleId}:${n}`).digest().readUInt32BE(0) / 2 ** 32;
}

/** `*` matches any characters, `/` included; everything else literally; in linear time (src/faults/glob.ts). */
function pathMatches(pattern: string, path: string): boolean {
  return globMatches(compileGlob(pattern), path);
}
