/**
 * Where webhooks really go, in words: the console names the target a person can act on (a URL,
 * the account's listeners, the listener that carried a delivery), never a rule that may not
 * apply ("the account's, if set"). Plain data and strings, no DOM, so unit tests read them.
 */

export type DeliveryMode = 'direct' | 'listeners';

/** A text with the parts that are machine values (URLs, listener names) marked, to be shown as code. */
export type Said = readonly (string | { code: string })[];

/** The text as one string: what a person reads, and what tests compare. */
export const textOf = (said: Said): string => said.map((part) => (typeof part === 'string' ? part : part.code)).join('');

/** What of the account decides where a webhook goes (GET /_sandbox/account). */
export interface AccountTarget {
  webhookUrl: string | null;
  /** Absent from a sandbox older than listeners mode: its webhooks are direct. */
  webhookDelivery?: DeliveryMode;
}

/** The parts of a delivery (GET /_sandbox/webhooks) that say where it went. */
export interface DeliveryTarget {
  url: string | null;
  status: string;
  waitingSince?: string | null;
  attempts: readonly { httpStatus: number | null; error: string | null; via?: string; listeners?: readonly unknown[] }[];
}

/** The flag of payments-sandbox listen that names where a listener posts. */
const FORWARD_TO = { code: '--forward-to' };

const LISTENER_ERROR = /^(no listener connected|listener )/;

/** An attempt offered to listeners rather than posted by the sandbox. */
const byListener = (a: DeliveryTarget['attempts'][number]): boolean => a.via !== undefined || (a.listeners?.length ?? 0) > 0 || (a.error !== null && LISTENER_ERROR.test(a.error));

const succeeded = (a: DeliveryTarget['attempts'][number]): boolean => a.httpStatus !== null && a.httpStatus >= 200 && a.httpStatus < 300;

/**
 * Whether a delivery goes (or went) through listeners. A pending one goes the account's way now
 * (`mode`, when known); a finished one went the way its last attempt did; one with no attempt
 * and no URL that is not undeliverable can only be a listeners-mode delivery.
 */
export function throughListeners(d: DeliveryTarget, mode: DeliveryMode | undefined): boolean {
  if (d.waitingSince) return true;
  if (d.status === 'pending' && mode) return mode === 'listeners';
  const last = d.attempts.at(-1);
  if (last) return byListener(last);
  if (d.url === null) return d.status !== 'undeliverable';
  return mode === 'listeners';
}

/** The listener whose answer settled it ("listener ana-laptop"): the one that got a 2xx, else the latest one that answered. */
function carrier(d: DeliveryTarget): string | undefined {
  const withVia = d.attempts.filter((a) => a.via !== undefined);
  return (withVia.findLast(succeeded) ?? withVia.at(-1))?.via;
}

/**
 * Where a delivery goes, after the arrow of its card's header: its URL (direct), the listener
 * that carried it, or the account's listeners; "no URL (undeliverable)" only when nothing could
 * take it. `mode` is the account's delivery mode now, when it could be read.
 */
export function deliveryTargetOf(d: DeliveryTarget, mode: DeliveryMode | undefined): Said {
  if (!throughListeners(d, mode)) return d.url === null ? ['no URL (undeliverable)'] : [{ code: d.url }];
  const by = carrier(d);
  if (by) return d.url === null ? [{ code: by }, ' (to its ', FORWARD_TO, '; no URL set)'] : [{ code: d.url }, ' via ', { code: by }];
  return d.url === null ? ["the account's listeners (to their ", FORWARD_TO, '; no URL set)'] : [{ code: d.url }, " via the account's listeners"];
}

/**
 * Where the webhooks of a transaction or withdrawal go: its own postbackUrl, else the account's
 * webhook URL, posted by the sandbox (direct) or by the account's listeners, which post to their
 * --forward-to when they have one. `account` null: it could not be read (an older sandbox).
 */
export function webhookTargetOf(postbackUrl: string | null, account: AccountTarget | null): Said {
  if (!account) return postbackUrl ? [{ code: postbackUrl }, ' (its postbackUrl)'] : ["the account's webhook URL, if it has one"];
  const url = postbackUrl ?? account.webhookUrl;
  const whose = postbackUrl ? ' (its postbackUrl)' : " (the account's webhook URL)";
  if ((account.webhookDelivery ?? 'direct') === 'direct') {
    return url ? [{ code: url }, whose] : ['nowhere: it has no postbackUrl and the account no webhook URL, so its webhooks are recorded as undeliverable'];
  }
  return url
    ? ["the account's listeners, which post to their ", FORWARD_TO, ', else to ', { code: url }, whose]
    : ["the account's listeners, which post to their ", FORWARD_TO, ' (it has no postbackUrl and the account no webhook URL)'];
}

/** The account's rule, for its own page: where a charge without a postbackUrl sends its webhooks. */
export function accountTargetOf(account: AccountTarget): Said {
  const url = account.webhookUrl;
  if ((account.webhookDelivery ?? 'direct') === 'direct') {
    return url ? ["each charge's postbackUrl, else ", { code: url }] : ["each charge's postbackUrl; a charge without one has nowhere to go (undeliverable)"];
  }
  return url
    ? ["the account's listeners, which post to their ", FORWARD_TO, ", else to each charge's postbackUrl, else ", { code: url }]
    : ["the account's listeners, which post to their ", FORWARD_TO, ", else to each charge's postbackUrl"];
}

const RAIL_NAMES: Readonly<Record<string, string>> = { PIX: 'Pix', BOLETO: 'Boleto', CARD: 'Card' };

/**
 * Which rail paid a hybrid (Pix or boleto) charge: "Pix", "Boleto"; null when it is not a
 * hybrid or nothing paid it. Other methods have one rail, which the method already names.
 */
export function paidByOf(tx: { method: string; paidRail?: unknown }): string | null {
  if (tx.method !== 'PIX_BOLETO' || typeof tx.paidRail !== 'string') return null;
  return RAIL_NAMES[tx.paidRail] ?? tx.paidRail;
}
