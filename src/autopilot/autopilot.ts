import { isDomainError } from '../errors.js';
import type { Logger } from '../log.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import type { AutopilotRule, AutopilotRules, AutopilotState } from '../spec/types.js';
import type { Collection, Store } from '../store/store.js';
import type { TransactionRecord } from '../transactions/transaction-record.js';
import type { Transactions } from '../transactions/transactions.js';
import type { Transitions } from '../transactions/transitions.js';
import { ruleMatches } from './match.js';

export const AUTOPILOT_JOB = 'autopilot';

interface AccountRules {
  id: string;
  rules: AutopilotRule[];
}

type Action = AutopilotRule['actions'][number];

/**
 * Acts on new transactions by itself, so payments arrive while a developer clicks through
 * their own checkout. Each action of the first matching rule becomes a stored job on the
 * account's clock: it survives restarts and fires at once when the clock is advanced.
 */
export class Autopilot {
  private readonly accountRules: Collection<AccountRules>;

  constructor(
    store: Store,
    transactions: Transactions,
    private readonly transitions: Transitions,
    private readonly scheduler: Scheduler,
    private readonly sandboxRules: AutopilotRule[],
    private readonly logger: Logger,
  ) {
    this.accountRules = store.collection<AccountRules>('autopilot');
    transactions.onCreate((record) => this.onCreate(record));
    scheduler.register(AUTOPILOT_JOB, (job) => this.run(job.accountId, job.ref));
  }

  state(accountId: string): AutopilotState {
    const own = this.accountRules.get(accountId);
    if (own) return { source: 'account', rules: own.rules };
    return { source: this.sandboxRules.length ? 'sandbox' : 'none', rules: this.sandboxRules };
  }

  set(accountId: string, rules: AutopilotRules): AutopilotState {
    this.accountRules.put({ id: accountId, rules: rules.rules });
    return this.state(accountId);
  }

  clear(accountId: string): AutopilotState {
    this.accountRules.delete(accountId);
    return this.state(accountId);
  }

  private onCreate(record: TransactionRecord): void {
    const rule = this.state(record.accountId).rules.find((r) => ruleMatches(r, record));
    if (!rule) return;
    const created = Date.parse(record.view.createdAt);
    rule.actions.forEach((action, index) => {
      // The ref carries the whole action, so a stored job runs the same action after a restart or a rule change.
      const ref = `${record.id}|${index}|${action.do}|${action.rail ?? ''}|${rule.name}`;
      this.scheduler.schedule(record.accountId, AUTOPILOT_JOB, ref, created + (action.afterMs ?? 0));
    });
  }

  private run(accountId: string, ref: string): void {
    const [id = '', , verb, rail, ruleName] = ref.split('|');
    const action = { do: verb, rail: rail || undefined } as Action;
    try {
      if (action.do === 'fill') this.transitions.fill(accountId, id);
      else if (action.do === 'pay') this.transitions.pay(accountId, id, action.rail);
      else if (action.do === 'expire') this.transitions.expire(accountId, id);
      else if (action.do === 'decline') this.transitions.decline(accountId, id);
      else if (action.do === 'refund') this.transitions.refund(accountId, id);
      else if (action.do === 'chargeback') this.transitions.chargeback(accountId, id);
    } catch (error) {
      // Someone got there first (paid by hand, expired, reset): the autopilot steps aside.
      if (!isDomainError(error)) throw error;
      this.logger.info({ transaction: id, rule: ruleName, action: action.do, reason: error.message }, 'autopilot action skipped');
    }
  }
}
