import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import { Dispatcher } from '../../src/webhooks/dispatcher.js';
import { WebhookTargets, type Resolve } from '../../src/webhooks/targets.js';
import { receiversClosedAfterEach } from '../helpers/webhooks.js';

/**
 * The webhook target policy on a host name, checked on the address it resolves to when the
 * socket connects (undici's connect lookup). No real DNS query and no packet beyond loopback:
 * a table lookup maps test names to addresses, and the refused ones fail in the lookup,
 * before their socket connects.
 */
const receiver = receiversClosedAfterEach();

describe('at connect time (a test lookup maps names to addresses)', () => {
  /** Answers like dns.lookup with all: true, from a table; an unknown name is ENOTFOUND (no real DNS query). */
  const table = (entries: Record<string, LookupAddress[]>): Resolve & { asked: string[] } => {
    const asked: string[] = [];
    const resolve = ((hostname, _options, callback) => {
      asked.push(hostname);
      const found = entries[hostname];
      queueMicrotask(() =>
        found ? callback(null, found) : callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []),
      );
    }) as Resolve & { asked: string[] };
    resolve.asked = asked;
    return resolve;
  };

  it('the lookup refuses a name that resolves to link-local or metadata addresses, and keeps the allowed ones', async () => {
    const targets = WebhookTargets.parse(undefined);
    const resolve = table({
      'meta.test': [{ address: '169.254.169.254', family: 4 }],
      'v6meta.test': [{ address: 'fd00:ec2::254', family: 6 }],
      'mixed.test': [
        { address: '169.254.169.254', family: 4 },
        { address: '127.0.0.1', family: 4 },
      ],
      'mapped.test': [{ address: '::ffff:169.254.169.254', family: 6 }],
      // What a DNS64 resolver answers for an IPv4-only name, and the deprecated IPv4-compatible form.
      'nat64.test': [{ address: '64:ff9b::a9fe:a9fe', family: 6 }],
      'compat.test': [{ address: '::a9fe:a9fe', family: 6 }],
    });
    const lookup = targets.lookup(resolve);
    const ask = (name: string, all: boolean) =>
      new Promise<{ error: (Error & { code?: string }) | null; result: unknown }>((done) =>
        lookup(name, { all }, (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => done({ error, result: all ? address : { address, family } })),
      );
    for (const name of ['meta.test', 'v6meta.test', 'mapped.test', 'nat64.test', 'compat.test']) {
      for (const all of [true, false]) {
        const { error } = await ask(name, all);
        expect(error?.code, name).toBe('ESANDBOXTARGET');
        expect(error?.message).toMatch(/refused by the webhook target policy/);
      }
    }
    expect(await ask('mixed.test', true)).toEqual({ error: null, result: [{ address: '127.0.0.1', family: 4 }] });
    expect(await ask('mixed.test', false)).toEqual({ error: null, result: { address: '127.0.0.1', family: 4 } });
    expect((await ask('nowhere.test', true)).error?.code).toBe('ENOTFOUND');
  });

  it('the dispatcher uses it: a name mapped to loopback is delivered, a name mapped to fe80::1 is refused before its socket connects', async () => {
    const hook = await receiver(200);
    const resolve = table({
      'hook.test': [{ address: '127.0.0.1', family: 4 }],
      // Link-local IPv6 without a zone: were the check missing, the kernel would refuse the connect locally (EINVAL), so no packet can leave either way.
      'meta.test': [{ address: 'fe80::1', family: 6 }],
    });
    const dispatcher = new Dispatcher(2_000, { targets: WebhookTargets.parse(undefined), resolve });
    const connected: string[] = [];
    const connectErrors: string[] = [];
    const onConnected = (message: unknown): void => void connected.push(String((message as { connectParams: { hostname: string } }).connectParams.hostname));
    const onConnectError = (message: unknown): void => void connectErrors.push(String((message as { error: { code?: string } }).error.code));
    subscribe('undici:client:connected', onConnected);
    subscribe('undici:client:connectError', onConnectError);
    try {
      const ok = await dispatcher.post(hook.url.replace('127.0.0.1', 'hook.test'), '{}', {});
      expect(ok).toMatchObject({ ok: true, httpStatus: 200 });
      expect(hook.requests).toHaveLength(1);

      const refused = await dispatcher.post('http://meta.test:8080/latest', '{}', {});
      expect(refused).toMatchObject({ ok: false, httpStatus: null, responseBody: null, refused: true });
      expect(refused.error).toMatch(/refused by the webhook target policy: meta\.test resolves to fe80::1/);
      expect(resolve.asked).toEqual(['hook.test', 'meta.test']);
      // The socket failed in its lookup: it never connected, and not for a kernel's reason (EINVAL).
      expect(connected).toEqual(['hook.test']);
      expect(connectErrors).toEqual(['ESANDBOXTARGET']);
    } finally {
      unsubscribe('undici:client:connected', onConnected);
      unsubscribe('undici:client:connectError', onConnectError);
      await dispatcher.close();
    }
  });

  it('a literal target is checked before any request, so the lookup (which literals skip) is not the only guard', async () => {
    const resolve = table({});
    const dispatcher = new Dispatcher(2_000, { targets: WebhookTargets.parse(['hooks.example.com']), resolve });
    try {
      for (const url of ['http://169.254.169.254/', 'http://127.0.0.1:9/']) {
        const outcome = await dispatcher.post(url, '{}', {});
        expect(outcome, url).toMatchObject({ ok: false, refused: true, httpStatus: null, responseBody: null });
      }
      expect(resolve.asked).toEqual([]);
    } finally {
      await dispatcher.close();
    }
  });
});

describe('configuration', () => {
  it('parses hosts, *.wildcards, IPs and CIDRs; refuses what it cannot read', () => {
    expect(WebhookTargets.parse(['*']).describe()).toBe('*');
    expect(WebhookTargets.parse(' hooks.example.com , 10.0.0.0/8,fd12::/16 ').describe()).toBe('hooks.example.com, 10.0.0.0/8, fd12::/16');
    for (const bad of ['10.0.0.0/33', 'http://x', '', 'a b']) expect(() => WebhookTargets.parse([bad]), bad).toThrow(/SANDBOX_WEBHOOK_ALLOW/);
  });

  it('an explicit link-local entry still cannot open metadata addresses', () => {
    const targets = WebhookTargets.parse(['169.254.0.0/16']);
    expect(targets.refusal('http://169.254.169.254/')).toMatch(/link-local/);
  });
});
