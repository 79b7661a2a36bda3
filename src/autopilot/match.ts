import type { AutopilotRule } from '../spec/types.js';
import type { TransactionRecord } from '../transactions/transaction-record.js';
import type { WithdrawalRecord } from '../withdrawals/withdrawals.js';

type Match = NonNullable<AutopilotRule['match']>;
type TextCondition = NonNullable<Match['description']>;

const oneOrMany = <T>(value: T | T[] | undefined, actual: T): boolean =>
  value === undefined || (Array.isArray(value) ? value.includes(actual) : value === actual);

function textMatches(condition: TextCondition | undefined, actual: string | null): boolean {
  if (condition === undefined) return true;
  if (actual === null) return false;
  return (
    (condition.equals === undefined || actual === condition.equals) &&
    (condition.contains === undefined || actual.includes(condition.contains)) &&
    (condition.startsWith === undefined || actual.startsWith(condition.startsWith))
  );
}

/** Every condition a rule gives must hold; a rule without conditions fits every transaction. */
function amountMatches(amount: Match['amount'], actual: number): boolean {
  return (
    amount === undefined ||
    ((amount.equals === undefined || actual === amount.equals) &&
      (amount.min === undefined || actual >= amount.min) &&
      (amount.max === undefined || actual <= amount.max) &&
      (amount.endsWith === undefined || String(actual).endsWith(amount.endsWith)))
  );
}

export function ruleMatches(rule: AutopilotRule, record: TransactionRecord): boolean {
  const match = rule.match ?? {};
  const { view } = record;
  return (
    oneOrMany(match.currency, view.currency) &&
    oneOrMany(match.method, view.method) &&
    amountMatches(match.amount, view.amount) &&
    textMatches(match.description, record.details.description) &&
    textMatches(match.externalId, view.externalId)
  );
}

/** A withdrawal rule's conditions: amount, externalId and the key's type. */
export function withdrawalRuleMatches(rule: AutopilotRule, record: WithdrawalRecord): boolean {
  const match = rule.match ?? {};
  const { view } = record;
  return amountMatches(match.amount, view.amount) && textMatches(match.externalId, view.externalId) && oneOrMany(match.pixType, view.pixType);
}
