import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { Account, Transaction } from '../../src/spec/types.js';
import { APT_INSTALL_TIMEOUT_MS } from '../helpers/apt.js';
import { ensureCaddy } from '../helpers/caddy.js';
import { findPostgresBin, freePort, startCluster, type PgCluster } from '../helpers/postgres.js';
import { ROOT } from '../helpers/process.js';
import { pixBody } from '../helpers/purchases.js';
import { Client } from '../helpers/sandbox.js';
import { eventually, health } from '../helpers/shared-sandboxes.js';

/**
 * docker-compose.yml, as far as a machine without a Docker engine allows: the file is read as
 * compose reads it (YAML merge keys, ${VAR:-default} / ${VAR:?error} interpolation), then the
 * same services are started natively, each with the environment compose would give it on top of
 * the image's (the Dockerfile's ENV) and the image's CMD: PostgreSQL from Debian in place of the
 * postgres image, the two sandbox services as `node dist/bin.js start`. Service names become
 * loopback (what compose's DNS does), container ports become free loopback ports (what `ports`
 * publishes), the /data volume a temp dir. Each service's own healthcheck command is run. The
 * balancer runs its Caddyfile on Debian's caddy, with the same translation (site and upstream
 * addresses) and two global options a container does not need (no admin endpoint, no HTTPS).
 */

interface Service {
  image?: string;
  build?: string | { context: string };
  environment?: Record<string, string | number>;
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  command?: string[];
  configs?: { source: string; target: string }[];
}
interface ComposeFile {
  services: Record<string, Service>;
  configs?: Record<string, { content: string }>;
}

const FILE = readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8');
const compose = parse(FILE, { merge: true }) as ComposeFile;

/** Compose's interpolation: `$$`, `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:?error}`, `${VAR?error}`. */
function interpolate(value: string, vars: Record<string, string | undefined>): string {
  return value.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?)([-?])([^}]*))?\}/g, (whole, name: string | undefined, colon: string, kind: string, arg: string) => {
    if (whole === '$$') return '$';
    const v = vars[name!];
    const missing = colon === ':' ? v === undefined || v === '' : v === undefined;
    if (!kind) return v ?? '';
    if (!missing) return v!;
    if (kind === '-') return arg;
    throw new Error(`required variable ${name} is missing a value: ${arg}`);
  });
}

/** The runtime stage of the Dockerfile: its ENV (KEY=value pairs, `\` continuations), CMD and HEALTHCHECK command (JSON forms). */
function imageOf(dockerfile: string): { env: Record<string, string>; cmd: string[]; healthcheck: string[] } {
  const lines = dockerfile.replace(/\\\n/g, ' ').split('\n');
  const stage = lines.slice(lines.map((l) => /^FROM\s/i.test(l)).lastIndexOf(true));
  const env: Record<string, string> = {};
  for (const line of stage.filter((l) => /^ENV\s/i.test(l))) {
    for (const [, key, value] of line.slice(4).matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|\S+)/g)) env[key!] = value!.replace(/^"|"$/g, '');
  }
  const cmd = stage.find((l) => /^CMD\s/i.test(l));
  if (!cmd) throw new Error('the Dockerfile has no CMD in its runtime stage');
  const check = /CMD\s+(\[.*\])\s*$/.exec(stage.find((l) => /^HEALTHCHECK\s/i.test(l)) ?? '');
  if (!check) throw new Error('the Dockerfile has no HEALTHCHECK CMD in its runtime stage');
  return { env, cmd: JSON.parse(cmd.slice(4)) as string[], healthcheck: JSON.parse(check[1]!) as string[] };
}

const image = imageOf(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
const SANDBOXES = Object.entries(compose.services).filter(([, s]) => s.build !== undefined);
const ADMIN_TOKEN = 'compose-test-token';
const VARS = { SANDBOX_ADMIN_TOKEN: ADMIN_TOKEN };

describe('docker-compose.yml', () => {
  it('publishes every port on loopback only, and checks the health of every service', () => {
    for (const [name, service] of Object.entries(compose.services)) {
      for (const port of service.ports ?? []) expect(port, `${name}: ${port}`).toMatch(/^127\.0\.0\.1:\d+:\d+$/);
      expect(service.healthcheck?.test, `${name} healthcheck`).toBeDefined();
    }
    expect(compose.services.postgres?.image).toMatch(/^postgres:\d+$/);
    expect(compose.services.postgres?.ports).toBeUndefined();
  });

  it('runs two sandboxes from the Dockerfile on the postgres service, with one environment', () => {
    expect(SANDBOXES.map(([name]) => name)).toHaveLength(2);
    const envs = SANDBOXES.map(([, s]) => s.environment);
    expect(envs[0]).toEqual(envs[1]);
    for (const [name, service] of SANDBOXES) {
      expect(service.build, name).toBe('.');
      // The image's own check, so that `docker run` and compose judge health alike.
      expect(service.healthcheck?.test, name).toEqual(['CMD', ...image.healthcheck]);
      expect(service.depends_on?.postgres?.condition, name).toBe('service_healthy');
      expect(new URL(String(service.environment?.SANDBOX_STORE)).host).toBe('postgres:5432');
    }
    // Compose refuses to start them without an admin token: no shared sandbox with a well-known one.
    expect(() => interpolate(String(envs[0]?.SANDBOX_ADMIN_TOKEN), {})).toThrow(/SANDBOX_ADMIN_TOKEN/);
    expect(interpolate(String(envs[0]?.SANDBOX_PUBLIC_URL), {})).toBe('http://localhost:4010');
  });

  it('puts a balancer in front of both instances', () => {
    const balancer = compose.services.balancer;
    expect(balancer?.image).toMatch(/^caddy:\d+$/);
    const caddyfile = compose.configs?.[balancer?.configs?.[0]?.source ?? '']?.content ?? '';
    for (const [name] of SANDBOXES) expect(caddyfile).toContain(`${name}:4010`);
    expect(Object.keys(balancer?.depends_on ?? {}).sort()).toEqual(SANDBOXES.map(([name]) => name).sort());
  });
});

describe('docker-compose.yml started natively', { shuffle: false }, () => {
  let cluster: PgCluster;
  const children: ChildProcess[] = [];
  const dirs: string[] = [];
  const started: { name: string; url: string; env: Record<string, string>; child: ChildProcess; output: () => string }[] = [];
  let balancerUrl = '';
  let balancerOutput = (): string => '';

  /** What compose's DNS and port publishing would do, natively: service host names → the loopback address they are published on. */
  function serviceEnv(service: Service, hosts: Record<string, string>, port: number, dir: string): Record<string, string> {
    const env: Record<string, string> = { ...image.env };
    for (const [key, value] of Object.entries(service.environment ?? {})) env[key] = interpolate(String(value), VARS);
    const store = new URL(env.SANDBOX_STORE!);
    store.host = hosts[store.host] ?? store.host;
    env.SANDBOX_STORE = store.href;
    const published = service.ports?.[0]?.split(':')[0] ?? '127.0.0.1';
    return { ...env, SANDBOX_HOST: published, PORT: String(port), SANDBOX_URL_FILE: join(dir, 'url'), SANDBOX_DATA: join(dir, 'sandbox.json') };
  }

  beforeAll(async () => {
    cluster = await startCluster();
    const store = new URL(String(SANDBOXES[0]![1].environment?.SANDBOX_STORE));
    await cluster.createDatabase(store.pathname.slice(1));
    const hosts = { [store.host]: `${cluster.host}:${cluster.port}` };
    for (const [name, service] of SANDBOXES) {
      const dir = mkdtempSync(join(tmpdir(), `sandbox-compose-${name}-`));
      dirs.push(dir);
      const env = serviceEnv(service, hosts, await freePort(), dir);
      const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SANDBOX_') && k !== 'PORT' && k !== 'LOG_LEVEL'));
      const [program, ...args] = image.cmd;
      const child = spawn(program === 'node' ? process.execPath : program!, args, { cwd: ROOT, env: { ...clean, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      children.push(child);
      let out = '';
      child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
      const url = await eventually(
        async () => {
          if (child.exitCode !== null) throw new Error(`${name} exited: ${out}`);
          return /listening on (http:\/\/\S+)/.exec(out)?.[1];
        },
        `${name} to listen`,
        30_000,
      ).catch((error: unknown) => {
        throw new Error(`${String(error)}\n${out}`);
      });
      started.push({ name, url, env, child, output: () => out });
    }
    await startBalancer();
  }, 2 * APT_INSTALL_TIMEOUT_MS); // PostgreSQL's install, then caddy's

  /** The balancer service: its Caddyfile with service addresses translated, on Debian's caddy. */
  async function startBalancer(): Promise<void> {
    const caddy = await ensureCaddy();
    const service = compose.services.balancer!;
    const dir = mkdtempSync(join(tmpdir(), 'sandbox-compose-balancer-'));
    dirs.push(dir);
    const [hostIp, , containerPort] = service.ports![0]!.split(':');
    const port = await freePort();
    let caddyfile = compose.configs![service.configs![0]!.source]!.content;
    caddyfile = caddyfile.replace(new RegExp(`^:${containerPort} \\{`, 'm'), `http://${hostIp}:${port} {`);
    for (const { name, url } of started) caddyfile = caddyfile.replaceAll(`${name}:4010`, new URL(url).host);
    const file = join(dir, 'Caddyfile');
    writeFileSync(file, `{\n\tadmin off\n\tauto_https off\n}\n\n${caddyfile}`);
    const child = spawn(caddy, ['run', '--adapter', 'caddyfile', '--config', file], {
      env: { ...process.env, HOME: dir, XDG_DATA_HOME: join(dir, 'data'), XDG_CONFIG_HOME: join(dir, 'config') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let out = '';
    child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
    balancerOutput = () => out;
    balancerUrl = `http://${hostIp}:${port}`;
    await eventually(
      async () => {
        if (child.exitCode !== null) throw new Error(`caddy exited: ${out}`);
        return (await health({ url: balancerUrl })).status === 200;
      },
      'the balancer to answer',
      30_000,
      100,
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}\n${out}`);
    });
  }
  afterAll(async () => {
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
            setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
          }),
      ),
    );
    await cluster?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it("passes the postgres service's healthcheck", async () => {
    const [kind, command] = compose.services.postgres!.healthcheck!.test;
    expect(kind).toBe('CMD-SHELL');
    // pg_isready reads the server's address from the environment, as inside the container it needs none.
    const env = { ...process.env, PATH: `${findPostgresBin()}${delimiter}${process.env.PATH}`, PGHOST: cluster.host, PGPORT: String(cluster.port) };
    const { stdout } = await promisify(execFile)('sh', ['-c', command!], { env });
    expect(stdout).toMatch(/accepting connections/);
  });

  it("passes each sandbox service's own healthcheck, on the PostgreSQL store", async () => {
    expect(started).toHaveLength(2);
    for (const { name, url, env } of started) {
      const [kind, program, ...args] = compose.services[name]!.healthcheck!.test;
      expect(kind).toBe('CMD');
      expect(program).toBe('node');
      await promisify(execFile)(process.execPath, args, { env: { ...process.env, ...env } });
      expect(new URL(url).hostname).toBe('127.0.0.1');
      const res = await health({ url });
      expect(res.status).toBe(200);
      expect(res.body.store).toEqual({ kind: 'postgres', ok: true });
    }
  });

  it('a pipeline creates its account on one instance and reads its purchase on the other', async () => {
    const [a, b] = started;
    const account = await new Client(a!.url, undefined).post<Account>('/_sandbox/accounts', { name: 'ci-run-42' }, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(account.status, JSON.stringify(account.body)).toBe(201);
    // Without the token, closed (the services bind where others can reach them).
    expect((await new Client(b!.url, undefined).post('/_sandbox/accounts', { name: 'intruder' })).status).toBe(401);
    const onA = new Client(a!.url, account.body.secretKey);
    const onB = new Client(b!.url, account.body.secretKey);
    const tx = await onA.post<Transaction>('/transactions/v2/purchase', pixBody());
    expect(tx.status).toBe(201);
    const read = await onB.get<Transaction>(`/transactions/${tx.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(tx.body);
    // The URLs both emit are the balancer's (SANDBOX_PUBLIC_URL), whichever instance answered.
    expect(started.map((s) => s.env.SANDBOX_PUBLIC_URL)).toEqual(['http://localhost:4010', 'http://localhost:4010']);
  });

  it('the balancer serves both: an account and a purchase made through it are read on each instance', async () => {
    const lb = new Client(balancerUrl, undefined);
    const account = await lb.post<Account>('/_sandbox/accounts', { name: 'ci-run-43' }, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(account.status, balancerOutput()).toBe(201);
    const tx = await new Client(balancerUrl, account.body.secretKey).post<Transaction>('/transactions/v2/purchase', pixBody());
    expect(tx.status).toBe(201);
    for (const { url } of started) expect((await new Client(url, account.body.secretKey).get<Transaction>(`/transactions/${tx.body.id}`)).body).toEqual(tx.body);
  });

  // Last (this describe keeps its order): it kills an instance.
  it('an instance killed behind the balancer is invisible to its clients', async () => {
    const lb = new Client(balancerUrl, undefined);
    const account = await lb.post<Account>('/_sandbox/accounts', { name: 'ci-run-44' }, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(account.status).toBe(201);
    const client = new Client(balancerUrl, account.body.secretKey);
    const victim = started[0]!;
    victim.child.kill('SIGKILL');
    await new Promise((resolve) => victim.child.once('exit', resolve));
    // Bounded: every request through the balancer is answered by the survivor.
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      const created = await client.post<Transaction>('/transactions/v2/purchase', pixBody());
      statuses.push(created.status);
      if (created.status === 201) statuses.push((await client.get(`/transactions/${created.body.id}`)).status);
    }
    expect(statuses, balancerOutput().slice(-2000)).toEqual(Array.from({ length: 10 }, () => [201, 200]).flat());
  });
});
