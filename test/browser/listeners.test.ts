import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseRoute, startListener, type RunningListener } from '../../src/listen/listener.js';
import { APT_INSTALL_TIMEOUT_MS } from '../helpers/apt.js';
import { created, pixBody } from '../helpers/purchases.js';
import { startSandbox, type Client, type TestSandbox } from '../helpers/sandbox.js';
import { closedPortUrl, hmacHex, payOk, receiversClosedAfterEach, waitForDelivery } from '../helpers/webhooks.js';
import { brokenWords, launchChromium, screenshot, WIDTHS, type TestBrowser } from './chromium.js';
import { openAccount } from '../helpers/accounts.js';

/**
 * The console in listeners mode (contract v4, Listening), in headless Chromium: the delivery-mode
 * switch, the listeners connected, and each attempt a listener made "via listener <name>" with
 * its answer. The sandbox posts only to example.com, as a shared one would: the loopback
 * receiver here is out of its reach, and only the listener (this process's `listen`) gets there.
 */
let sandbox: TestSandbox;
let chromium: TestBrowser;
const receiver = receiversClosedAfterEach();
const listeners: RunningListener[] = [];

beforeAll(async () => {
  [sandbox, chromium] = await Promise.all([startSandbox({ instructionDelayMs: 600_000, webhookAllow: ['example.com'] }), launchChromium()]);
}, APT_INSTALL_TIMEOUT_MS);
afterAll(async () => {
  await chromium?.close();
  await sandbox?.stop();
});
afterEach(() => {
  for (const l of listeners.splice(0)) l.close();
});

/** An account of the test's own (its mode, listeners and deliveries reach no other test), and its key. */
async function ownAccount(name: string): Promise<{ own: Client; key: string }> {
  const { account, client } = await openAccount(sandbox.client, { name });
  return { own: client, key: account.secretKey };
}

/** `payments-sandbox listen` in this process, as the CLI starts it, forwarding to each delivery's own URL (or to `forwardTo`). */
async function listen(key: string, name: string, forwardTo?: string): Promise<RunningListener> {
  const l = startListener({ baseUrl: sandbox.url, key, routes: forwardTo ? [parseRoute(forwardTo)] : [], name, onDelivery: () => undefined, onStatus: () => undefined });
  listeners.push(l);
  await l.ready;
  return l;
}

async function signedIn(key: string, width: number, hash: string): Promise<Page> {
  const page = await chromium.context.newPage();
  page.setDefaultTimeout(15_000);
  await page.setViewportSize({ width, height: 860 });
  await page.goto(`${sandbox.url}/_sandbox/${hash}`);
  await page.getByLabel('Secret key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('#live.on').waitFor();
  return page;
}

const overflow = (page: Page): Promise<number> => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

describe('console: webhook listeners', () => {
  it('switches the account to listeners, names the listener, and shows its attempts with their answers; replay reaches it', async () => {
    const { own, key } = await ownAccount('console-listeners');
    const hook = await receiver({ status: 200, body: '{"received":true}' });
    // Refused in direct mode: a shared sandbox cannot post to a developer's machine.
    expect((await own.put('/_sandbox/webhook-url', { url: hook.url })).status).toBe(400);

    const page = await signedIn(key, WIDTHS.desktop, '#/account');
    const note = page.locator('#listening-status');
    await note.and(page.locator('[data-delivery="direct"][data-connected="0"]')).waitFor();
    // A listener connected while the account delivers directly would get nothing: the note says so.
    await listen(key, 'laptop');
    await page.getByRole('button', { name: 'Check listeners again' }).click();
    await note.and(page.locator('[data-delivery="direct"][data-connected="1"]')).waitFor();
    expect(await note.textContent()).toContain('receive nothing: switch the account to listeners');

    await page.getByRole('radio', { name: 'Listeners' }).check();
    await page.locator('#toast', { hasText: "Webhooks now go to this account's listeners" }).waitFor();
    await note.and(page.locator('[data-delivery="listeners"][data-connected="1"]')).waitFor();
    expect(await note.textContent()).toBe('Delivery: listeners. 1 listener connected: laptop.');
    expect((await own.get<{ webhookDelivery: string }>('/_sandbox/account')).body.webhookDelivery).toBe('listeners');
    expect(await page.locator('#account-webhook-delivery').textContent()).toBe('listeners');
    await screenshot(page, 'console-listeners-switched-desktop');

    // A payment whose postbackUrl only the listener's machine can reach.
    const tx = await created(own, pixBody({ externalId: 'order-listener-1', postbackUrl: hook.url }));
    await payOk(own, tx.id);
    await page.getByRole('link', { name: 'Webhooks', exact: true }).click();
    await page.getByRole('heading', { name: 'Webhook deliveries' }).waitFor();
    const delivery = page.locator('article.delivery', { has: page.locator(`a[href="#/transactions/${tx.id}"]`) });
    const first = delivery.locator('tr[data-attempt="1"][data-via="listener laptop"]');
    await first.waitFor();
    expect(await first.locator('.cell-answer').textContent()).toBe('HTTP 200via listener laptop');
    expect(await first.locator('.cell-body').textContent()).toBe('{"received":true}');
    expect(await first.locator('.cell-time').textContent()).toMatch(/^\d+ ms$/);
    await delivery.locator('.badge', { hasText: 'delivered' }).waitFor();
    // The receiver got the request a direct delivery would have sent, signed with the account's secret.
    const [got] = await hook.waitForRequests(1);
    const secret = (await own.get<{ webhookSecret: string }>('/_sandbox/account')).body.webhookSecret;
    expect(got!.headers['x-signature']).toBe(hmacHex(secret, got!.rawBody));

    await delivery.getByRole('button', { name: 'Replay' }).click();
    await page.locator('#toast', { hasText: /Replayed whd_\S+: HTTP 200 via listener laptop/ }).waitFor();
    const replayed = delivery.locator('tr[data-attempt="2"][data-via="listener laptop"]');
    await replayed.waitFor();
    expect(await replayed.locator('.tag').textContent()).toBe('replay');
    expect(hook.requests.map((r) => r.headers['x-sandbox-delivery'])).toEqual([await delivery.getAttribute('data-delivery'), await delivery.getAttribute('data-delivery')]);
    expect(await page.locator('#listening-status').textContent()).toContain('1 listener connected: laptop');
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    await screenshot(page, 'console-listeners-delivered-desktop');
    await page.close();
  });

  it('says what to do when the sandbox does not answer, at sign-in and after', async () => {
    const { key } = await ownAccount('console-unreachable');
    const page = await chromium.context.newPage();
    page.setDefaultTimeout(15_000);
    // The connection refused, as when the sandbox (or the tunnel to it) is gone.
    await page.route('**/_sandbox/clock', (route) => route.abort('connectionrefused'));
    await page.goto(`${sandbox.url}/_sandbox/`);
    await page.getByLabel('Secret key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#sign-in-error', { hasText: 'Cannot sign in: the sandbox did not answer: check that it is still running (and the tunnel or proxy to it, if any), then reload this page.' }).waitFor();
    await page.unroute('**/_sandbox/clock');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#live.on').waitFor();
    await page.route('**/_sandbox/listeners', (route) => route.abort('connectionrefused'));
    await page.getByRole('link', { name: 'Account' }).click();
    await page.locator('#toast', { hasText: 'Reading the listeners failed: the sandbox did not answer: check that it is still running' }).waitFor();
    await page.close();
  });

  it("shows a listener's connection error, and with no listener says what to run, readable at phone width", async () => {
    const { own, key } = await ownAccount('console-listeners-phone');
    expect((await own.put('/_sandbox/webhook-url', { delivery: 'listeners' })).status).toBe(200);
    const listener = await listen(key, 'ci-job-7');
    // Nothing listens at this port: the listener reports the refused connection as its answer.
    const refused = await created(own, pixBody({ externalId: 'order-listener-refused', postbackUrl: await closedPortUrl() }));
    await payOk(own, refused.id);
    await waitForDelivery(own, refused.id, (d) => d.attempts.length > 0, 'the refused attempt');
    listener.close();
    // And with the listener gone, the next payment's attempt finds nobody.
    await expect.poll(async () => (await own.get<{ listeners: unknown[] }>('/_sandbox/listeners')).body.listeners.length).toBe(0);
    const alone = await created(own, pixBody({ externalId: 'order-listener-alone', postbackUrl: 'http://localhost:3000/hooks' }));
    await payOk(own, alone.id);
    await waitForDelivery(own, alone.id, (d) => d.waitingSince !== null, 'the delivery waiting for a listener');

    for (const [name, width] of Object.entries(WIDTHS)) {
      const page = await signedIn(key, width, '#/webhooks');
      const note = page.locator('#listening-status[data-delivery="listeners"][data-connected="0"]');
      await note.waitFor();
      expect(await note.locator('code.command').textContent()).toBe(`npx payments-sandbox listen --base-url ${sandbox.url} --key <your secret key> --forward-to http://localhost:3000/hooks`);
      const refusedAttempt = page.locator(`article.delivery:has(a[href="#/transactions/${refused.id}"]) tr[data-attempt="1"]`);
      await refusedAttempt.waitFor();
      expect(await refusedAttempt.getAttribute('data-via')).toBe('listener ci-job-7');
      expect(await refusedAttempt.locator('.answer').textContent()).toMatch(/^ECONNREFUSED/);
      // No attempt spent: the delivery says it waits for a listener, and what to run.
      const aloneCard = page.locator(`article.delivery:has(a[href="#/transactions/${alone.id}"])`);
      await aloneCard.waitFor();
      expect(await aloneCard.locator('tr[data-attempt]').count()).toBe(0);
      expect(await aloneCard.locator('.card-head .badge', { hasText: 'waiting for a listener' }).count()).toBe(1);
      const reason = aloneCard.locator('.delivery-reason[data-reason="waiting"]');
      expect(await reason.textContent()).toMatch(/^waiting for a listener: no listener of the account that takes cashin\.paid is connected; offered as soon as one connects \(payments-sandbox listen\), until \S+Z\. Start payments-sandbox listen with this account's key \(the Account view shows the command\): it receives this delivery as soon as it connects\.$/);
      // Nothing wider than the phone, and no word split across lines but long ids where they must.
      expect(await overflow(page), name).toBeLessThanOrEqual(0);
      for (const box of await page.locator('.scroll').all()) expect(await box.evaluate((el) => el.scrollWidth - el.clientWidth), name).toBeLessThanOrEqual(0);
      expect(await brokenWords(page, '#listening-status, table.attempts', '.id'), name).toEqual([]);
      await screenshot(page, `console-listeners-webhooks-${name}`);
      await page.goto(`${sandbox.url}/_sandbox/#/account`);
      await page.locator('#listening-status[data-connected="0"]').waitFor();
      expect(await page.getByRole('radio', { name: 'Listeners' }).isChecked()).toBe(true);
      expect(await overflow(page), name).toBeLessThanOrEqual(0);
      await screenshot(page, `console-listeners-account-${name}`);
      await page.close();
    }
  });
  it('names where each webhook really goes: the listener that carried one with no URL, the account\'s listeners, the URL in force', async () => {
    const { own, key } = await ownAccount('console-listeners-targets');
    expect((await own.put('/_sandbox/webhook-url', { delivery: 'listeners' })).status).toBe(200);
    const hook = await receiver({ status: 200, body: '{"received":true}' });
    // No postbackUrl and no account URL: only the listener's --forward-to knows where it goes.
    await listen(key, 'ana-laptop', hook.url);
    const tx = await created(own, pixBody({ externalId: 'order-listener-target' }));
    await payOk(own, tx.id);
    const done = await waitForDelivery(own, tx.id, (d) => d.status === 'delivered', 'delivered by ana-laptop');
    expect(done.url).toBeNull();
    await hook.waitForRequests(1);
    for (const [name, width] of Object.entries(WIDTHS)) {
      const page = await signedIn(key, width, '#/webhooks');
      const card = page.locator(`article.delivery[data-delivery="${done.id}"]`);
      await card.locator('tr[data-attempt="1"][data-via="listener ana-laptop"]').waitFor({ state: 'attached' });
      // Issue 43: "→ no URL (undeliverable)" beside "delivered via listener ana-laptop".
      expect(await card.locator('.meta').textContent()).toContain('→ listener ana-laptop (to its --forward-to; no URL set) · 1 attempt');
      expect(await card.locator('.meta').textContent()).not.toContain('undeliverable');
      expect(await overflow(page), name).toBeLessThanOrEqual(0);
      await screenshot(page, `console-listeners-target-webhooks-${name}`);

      await page.goto(`${sandbox.url}/_sandbox/#/transactions/${tx.id}`);
      await page.getByRole('heading', { name: `Transaction ${tx.id}` }).waitFor();
      const target = page.locator('#tx-webhook-target');
      await target.waitFor();
      // Issue 43: "Webhook URL: the account's, if set".
      expect(await target.textContent()).toBe("the account's listeners, which post to their --forward-to (it has no postbackUrl and the account no webhook URL)");
      expect(await page.locator(`article.delivery[data-delivery="${done.id}"] .meta`).textContent()).toContain('→ listener ana-laptop (to its --forward-to; no URL set)');
      expect(await overflow(page), name).toBeLessThanOrEqual(0);
      await screenshot(page, `console-listeners-target-transaction-${name}`);
      await page.close();
    }

    // With the account's URL set, the summary names it, in listeners mode and once direct again.
    expect((await own.put('/_sandbox/webhook-url', { url: 'https://shop.example.com/hooks' })).status).toBe(200);
    const page = await signedIn(key, WIDTHS.desktop, `#/transactions/${tx.id}`);
    const target = page.locator('#tx-webhook-target');
    await target.filter({ hasText: 'https://shop.example.com/hooks' }).waitFor();
    expect(await target.textContent()).toBe("the account's listeners, which post to their --forward-to, else to https://shop.example.com/hooks (the account's webhook URL)");
    expect((await own.put('/_sandbox/webhook-url', { delivery: 'direct' })).status).toBe(200);
    await page.reload();
    await target.filter({ hasText: 'https://shop.example.com/hooks (the account' }).waitFor();
    expect(await target.textContent()).toBe("https://shop.example.com/hooks (the account's webhook URL)");
    // The delivery that a listener carried still says so, now that the account delivers directly.
    expect(await page.locator(`article.delivery[data-delivery="${done.id}"] .meta`).textContent()).toContain('→ listener ana-laptop (to its --forward-to; no URL set)');
    await page.goto(`${sandbox.url}/_sandbox/#/account`);
    const rule = page.locator('#account-webhook-target');
    await rule.waitFor();
    expect(await rule.textContent()).toBe("each charge's postbackUrl, else https://shop.example.com/hooks");
    await screenshot(page, 'console-listeners-target-account-desktop');
    await page.close();
  });
});
