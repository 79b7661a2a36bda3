import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { components } from '../spec/openapi-types.js';
import { control, type Control } from './control.js';
import { basicAuthorization } from '../basic-auth.js';
import { KIT_HEADER, KitHttp, type Query } from './http.js';
import { deferredListenSocket, openListenSocket, type ListenSocket } from './listen-socket.js';
import { WebhookInbox, type Webhooks } from './webhooks.js';

export type RequestLogEntry = components['schemas']['RequestLogEntry'];
type Account = components['schemas']['Account'];
export type RequestsQuery = Query<'listRequests'> & {
  /** Keep the kit's own calls (control actions, the mode switch); left out by default, so the log shows what the app sent. */
  includeKit?: boolean;
};

export interface Requests {
  /** The account's request log, newest first: what the app under test sent and what it was answered. */
  list(query?: RequestsQuery): Promise<RequestLogEntry[]>;
}

/** An account of the sandbox with the helpers bound to it. */
export interface SandboxAccount {
  /** The sandbox's base URL: what the app under test is configured with. */
  url: string;
  accountId: string;
  secretKey: string;
  /** Verifies `x-signature`: what the app under test is configured with. */
  webhookSecret: string;
  /** `Basic base64("secret:" + secretKey)`, as the API takes it. */
  authorization: string;
  control: Control;
  webhooks: Webhooks;
  requests: Requests;
}

/** An account helper and the listener behind its `webhooks`, which the kit closes when it stops. */
export interface BoundAccount {
  account: SandboxAccount;
  /** Settles as the listener's first connection does, without starting it. */
  connected: Promise<void>;
  close(): Promise<void>;
}

/**
 * How long an account's first `control` call waits for its listener's hello: the webhook the call
 * makes then reaches this kit even when another listener of the account takes it at once. A
 * handshake takes a few ms; a proxy that holds WebSockets does not hold the call for long.
 */
const FIRST_CALL_WAIT_MS = 2_000;

export interface BindOptions {
  /**
   * Connect a listener deferred to first use at once, in the background, as the account is
   * handed out: the kit's listeners are warm (one has connected), so the connection costs a
   * fraction of a first one, and the account's first webhook then need not wait for a handshake.
   */
  connectNow?: boolean;
  /**
   * The sandbox is known to keep an attempt made while no listener is connected until one is
   * (contract v5: the kit's own in-process sandbox), so an account switched to `listeners` mode
   * gets its listener at first use too. Otherwise (a sandbox of unknown version) the listener
   * is connected before the account is handed out: a v4 sandbox spent retries with none.
   */
  keepsAttempts?: boolean;
  /** The account's id and webhook secret, when the kit has them already (its own sandbox's default account): not asked for. */
  known?: Pick<Account, 'id' | 'webhookSecret'>;
}

/**
 * Binds the helpers to the account of `secretKey`: switches it to `listeners` delivery mode (unless
 * `created`, the kit's own creation's answer, is in it already) and gives it a listener, so every
 * attempt of its webhooks is the kit's (none is posted by the sandbox, none spent because nobody
 * listened yet). The listener connects at first use where the sandbox keeps attempts for one,
 * before the account is handed out elsewhere.
 */
export async function bindAccount(url: string, secretKey: string, created?: Account, { keepsAttempts = false, connectNow = false, known }: BindOptions = {}): Promise<BoundAccount> {
  const http = new KitHttp(url, basicAuthorization(secretKey));
  const name = `test-kit@${hostname()}:${process.pid}#${randomUUID().slice(0, 8)}`;
  const deferred = (me: Pick<Account, 'id' | 'webhookSecret'>): BoundAccount => {
    const inbox = new WebhookInbox(me.webhookSecret);
    const socket = deferredListenSocket({ url, secretKey, name, onOffer: (offer) => inbox.take(offer) });
    inbox.listening(socket.ready, () => socket.open());
    if (connectNow) socket.open();
    return helpers(url, secretKey, http, me, inbox, socket);
  };
  if (created?.webhookDelivery === 'listeners') {
    // Made in listeners mode: the sandbox posts nothing itself, and an attempt made while no
    // listener is connected waits for one, unspent, and is offered at its hello (contract v5). So
    // the account is handed out now, and its listener connects at the first call that may make
    // or show a webhook (its `control`, its `webhooks`): a test that uses neither opens no
    // connection. The first control call waits for the hello (FIRST_CALL_WAIT_MS) before it is
    // sent. A wait for a webhook fails with the listener's error if it cannot connect.
    return deferred(created);
  }
  // Through the kit's client rather than listen's takeOver/whoAmI: its calls carry the kit's header, so requests.list() leaves them out.
  // The three at once, not one after another (four round trips and a handshake were most of an
  // account()); all are done before the helpers are handed out, as the account may be in direct
  // mode until the switch is answered. An offer that comes before the account's webhook secret
  // is known (another client of a shared sandbox's account) waits for it.
  const modeSet = http.call('setWebhookUrl', 'PUT', '/_sandbox/webhook-url', { body: { delivery: 'listeners' } });
  if (keepsAttempts) {
    // Once switched, this sandbox keeps each attempt for a listener: it may connect at first use, as a created account's does.
    const [, me] = await Promise.all([modeSet, known ?? http.call('getSandboxAccount', 'GET', '/_sandbox/account')]);
    return deferred(me);
  }
  const account = http.call('getSandboxAccount', 'GET', '/_sandbox/account');
  const inbox = account.then((me) => new WebhookInbox(me.webhookSecret));
  const opening = openListenSocket({ url, secretKey, name, onOffer: (offer) => inbox.then((box) => box.take(offer)) });
  const [set, got, opened] = await Promise.allSettled([modeSet, inbox, opening]);
  if (set.status === 'rejected' || got.status === 'rejected' || opened.status === 'rejected') {
    if (opened.status === 'fulfilled') await opened.value.close();
    throw [set, got, opened].flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason] : []))[0];
  }
  return helpers(url, secretKey, http, await account, got.value, opened.value);
}

function helpers(url: string, secretKey: string, http: KitHttp, me: Pick<Account, 'id' | 'webhookSecret'>, webhooks: WebhookInbox, socket: ListenSocket): BoundAccount {
  const requests: Requests = {
    async list(query = {}) {
      const { includeKit = false, ...filters } = query;
      const page = await http.call('listRequests', 'GET', '/_sandbox/requests', { query: { limit: 100, ...filters } });
      return includeKit ? page.data : page.data.filter((entry) => entry.requestHeaders[KIT_HEADER] === undefined);
    },
  };
  return {
    account: {
      url,
      accountId: me.id,
      secretKey,
      webhookSecret: me.webhookSecret,
      authorization: basicAuthorization(secretKey),
      control: control(http, () => webhooks.listenedFor(FIRST_CALL_WAIT_MS)),
      webhooks,
      requests,
    },
    connected: socket.ready,
    close: () => socket.close(),
  };
}
