import { isDomainError } from '../errors.js';
import type { Logger } from '../log.js';
import type { Job, JobKind, JobRunner } from '../scheduler/job-kinds.js';
import type { Jobs } from '../scheduler/jobs.js';
import type { AutopilotRule, AutopilotRules, AutopilotState } from '../spec/types.js';
import type { Reads, Repository, TableSpec, Unit } from '../store/ports.js';
import type { TransactionListener } from '../transactions/listeners.js';
import type { Transitions } from '../transactions/transitions.js';
import type { WithdrawalListener, WithdrawalRecord, Withdrawals } from '../withdrawals/withdrawals.js';
import { ruleMatches, withdrawalRuleMatches } from './match.js';

interface AccountRules {
  /** The account id: one record per account. */
  id: string;
  accountId: string;
  rules: AutopilotRule[];
}

export const AUTOPILOT_RULES: TableSpec<AccountRules> = { name: 'autopilot', settings: { account: 'accountId' } };

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

export interface AutopilotOptions {
  repository: Repository;
  jobs: Jobs;
  /** The sandbox's rules (SANDBOX_AUTOPILOT_FILE), for accounts without rules of their own. */
  sandboxRules: AutopilotRule[];
}

/**
 * Acts on new transactions by itself, so payments arrive while a developer clicks through
 * their own checkout. Each action of the first matching rule becomes a stored job on the
 * account's clock: it survives restarts and fires at once when the clock is advanced.
 */
export class Autopilot {
  private readonly jobs: Jobs;
  private readonly sandboxRules: AutopilotRule[];

  /** Plans the actions of a new transaction. */
  readonly transactions: TransactionListener = {
    created: async (unit, record) => {
      const rule = (await this.state(unit, record.accountId)).rules.find((r) => (r.on ?? 'transaction') === 'transaction' && ruleMatches(r, record));
      if (rule) await this.scheduleActions(unit, record.accountId, 'autopilot', record.id, rule, Date.parse(record.view.createdAt));
    },
  };

  /** Plans the actions of a new withdrawal. */
  readonly withdrawals: WithdrawalListener = {
    created: async (unit: Unit, record: WithdrawalRecord) => {
      const rule = (await this.state(unit, record.accountId)).rules.find((r) => r.on === 'withdrawal' && withdrawalRuleMatches(r, record));
      if (rule) await this.scheduleActions(unit, record.accountId, 'autopilotWithdrawal', record.id, rule, Date.parse(record.view.createdAt));
    },
  };

  constructor(options: AutopilotOptions) {
    this.jobs = options.jobs;
    this.sandboxRules = options.sandboxRules;
  }

  async state(reads: Reads, accountId: string): Promise<AutopilotState> {
    const own = await reads.table(AUTOPILOT_RULES).get(accountId, accountId);
    if (own) return { source: 'account', rules: own.rules };
    return { source: this.sandboxRules.length ? 'sandbox' : 'none', rules: this.sandboxRules };
  }

  async set(unit: Unit, accountId: string, rules: AutopilotRules): Promise<AutopilotState> {
    await unit.table(AUTOPILOT_RULES).put({ id: accountId, accountId, rules: rules.rules });
    return this.state(unit, accountId);
  }

  async clear(unit: Unit, accountId: string): Promise<AutopilotState> {
    await unit.table(AUTOPILOT_RULES).delete(accountId, accountId);
    return this.state(unit, accountId);
  }

  private async scheduleActions(unit: Unit, accountId: string, kind: JobKind, id: string, rule: AutopilotRule, created: number): Promise<void> {
    for (const [index, action] of rule.actions.entries()) {
      const stored: StoredAction = { id, index, do: action.do, rule: rule.name, ...(action.rail && { rail: action.rail }), ...(action.message && { message: action.message }) };
      await this.jobs.schedule(unit, accountId, kind, JSON.stringify(stored), created + (action.afterMs ?? 0));
    }
  }
}

/** Runs an autopilot action on a transaction (job kind `autopilot`). */
export function transactionActionRunner(transitions: Transitions, logger: Logger): JobRunner {
  return (unit: Unit, job: Job) => {
    const action = parseRef(job.ref);
    const { id } = action;
    const { accountId } = job;
    return stepAside(logger, action, async () => {
      if (action.do === 'fill') await transitions.fill(unit, accountId, id);
      else if (action.do === 'pay') await transitions.pay(unit, accountId, id, action.rail);
      else if (action.do === 'expire') await transitions.expire(unit, accountId, id);
      else if (action.do === 'decline') await transitions.decline(unit, accountId, id, { message: action.message });
      else if (action.do === 'refund') await transitions.refund(unit, accountId, id);
      else if (action.do === 'chargeback') await transitions.chargeback(unit, accountId, id, action.message);
    });
  };
}

/** Runs an autopilot action on a withdrawal (job kind `autopilotWithdrawal`). */
export function withdrawalActionRunner(withdrawals: Withdrawals, logger: Logger): JobRunner {
  return async (unit: Unit, job: Job) => {
    const action = parseRef(job.ref);
    if (action.do !== 'approve' && action.do !== 'reject' && action.do !== 'fail' && action.do !== 'return') return;
    const verb = action.do;
    await stepAside(logger, action, async () => {
      await withdrawals.act(unit, job.accountId, action.id, verb, { message: action.message });
    });
  };
}

/**
 * Someone got there first (paid by hand, expired, reset): the autopilot steps aside. The refusal
 * goes on to the scheduler, which ends the job with nothing of its unit kept (what the action
 * changed before it was refused must not be committed).
 */
async function stepAside(logger: Logger, action: StoredAction, run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (error) {
    if (isDomainError(error)) logger.info({ target: action.id, rule: action.rule, action: action.do, reason: error.message }, 'autopilot action skipped');
    throw error;
  }
}
