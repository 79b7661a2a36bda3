import { isDomainError } from '../errors.js';
import type { Logger } from '../log.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import type { AutopilotRule, AutopilotRules, AutopilotState } from '../spec/types.js';
import type { Collection, Store } from '../store/store.js';
import type { TransactionRecord } from '../transactions/transaction-record.js';
import type { Transactions } from '../transactions/transactions.js';
import type { Transitions } from '../transactions/transitions.js';
import type { WithdrawalRecord, Withdrawals } from '../withdrawals/withdrawals.js';
import { ruleMatches, withdrawalRuleMatches } from './match.js';

export const AUTOPILOT_JOB = 'autopilot';
export const AUTOPILOT_WITHDRAWAL_JOB = 'autopilotWithdrawal';

interface AccountRules {
  id: string;
  rules: AutopilotRule[];
}

type Action = AutopilotRule['actions'][number];

/** What a stored job runs: the whole action travels in the job's ref, so a rule change or a restart runs it unchanged. */
interface StoredAction {
  id: string;
  index: number;
  do: Action['do'];
  rail?: Action['rail'];
  message?: string;
  rule: string;
}

/** Refs of jobs stored by earlier versions: `id|index|do|rail|rule`. */
function parseRef(ref: string): StoredAction {
  if (ref.startsWith('{')) return JSON.parse(ref) as StoredAction;
  const [id = '', index = '0', verb, rail, rule = ''] = ref.split('|');
  return { id, index: Number(index), do: verb as Action['do'], rail: (rail || undefined) as Action['rail'], rule };
}

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
    private readonly withdrawals: Withdrawals,
    private readonly scheduler: Scheduler,
    private readonly sandboxRules: AutopilotRule[],
    private readonly logger: Logger,
  ) {
    this.accountRules = store.collection<AccountRules>('autopilot');
    transactions.onCreate((record) => this.onCreate(record));
    withdrawals.onCreate((record) => this.onWithdrawal(record));
    scheduler.register(AUTOPILOT_JOB, (job) => this.run(job.accountId, job.ref));
    scheduler.register(AUTOPILOT_WITHDRAWAL_JOB, (job) => this.runWithdrawal(job.accountId, job.ref));
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
    const rule = this.state(record.accountId).rules.find((r) => (r.on ?? 'transaction') === 'transaction' && ruleMatches(r, record));
    if (rule) this.scheduleActions(record.accountId, AUTOPILOT_JOB, record.id, rule, Date.parse(record.view.createdAt));
  }

  private onWithdrawal(record: WithdrawalRecord): void {
    const rule = this.state(record.accountId).rules.find((r) => r.on === 'withdrawal' && withdrawalRuleMatches(r, record));
    if (rule) this.scheduleActions(record.accountId, AUTOPILOT_WITHDRAWAL_JOB, record.id, rule, Date.parse(record.view.createdAt));
  }

  private scheduleActions(accountId: string, kind: string, id: string, rule: AutopilotRule, created: number): void {
    rule.actions.forEach((action, index) => {
      const stored: StoredAction = { id, index, do: action.do, rule: rule.name, ...(action.rail && { rail: action.rail }), ...(action.message && { message: action.message }) };
      this.scheduler.schedule(accountId, kind, JSON.stringify(stored), created + (action.afterMs ?? 0));
    });
  }

  private run(accountId: string, ref: string): void {
    const action = parseRef(ref);
    const { id } = action;
    this.stepAside(action, () => {
      if (action.do === 'fill') this.transitions.fill(accountId, id);
      else if (action.do === 'pay') this.transitions.pay(accountId, id, action.rail);
      else if (action.do === 'expire') this.transitions.expire(accountId, id);
      else if (action.do === 'decline') this.transitions.decline(accountId, id, { message: action.message });
      else if (action.do === 'refund') this.transitions.refund(accountId, id);
      else if (action.do === 'chargeback') this.transitions.chargeback(accountId, id, action.message);
    });
  }

  private runWithdrawal(accountId: string, ref: string): void {
    const action = parseRef(ref);
    if (action.do !== 'approve' && action.do !== 'reject' && action.do !== 'fail' && action.do !== 'return') return;
    const verb = action.do;
    this.stepAside(action, () => this.withdrawals.act(accountId, action.id, verb, { message: action.message }));
  }

  /** Someone got there first (paid by hand, expired, reset): the autopilot steps aside. */
  private stepAside(action: StoredAction, run: () => void): void {
    try {
      run();
    } catch (error) {
      if (!isDomainError(error)) throw error;
      this.logger.info({ target: action.id, rule: action.rule, action: action.do, reason: error.message }, 'autopilot action skipped');
    }
  }
}
