import type { AutopilotRule } from '../spec/types.js';
import type { TransactionRecord } from '../transactions/transaction-record.js';

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
export function ruleMatches(rule: AutopilotRule, record: TransactionRecord): boolean {
  const match = rule.match ?? {};
  const { view } = record;
  const amount = match.amount;
  return (
    oneOrMany(match.currency, view.currency) &&
    oneOrMany(match.method, view.method) &&
    (amount === undefined ||
      ((amount.equals === undefined || view.amount === amount.equals) &&
        (amount.min === undefined || view.amount >= amount.min) &&
        (amount.max === undefined || view.amount <= amount.max) &&
        (amount.endsWith === undefined || String(view.amount).endsWith(amount.endsWith)))) &&
    textMatches(match.description, record.details.description) &&
    textMatches(match.externalId, view.externalId)
  );
}
