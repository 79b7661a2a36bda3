import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import type { Config } from '../../src/config.js';
import { APT_INSTALL_TIMEOUT_MS, ensureDebianPackages } from '../helpers/apt.js';
import { startSandbox, type TestSandbox } from '../helpers/sandbox.js';

/** Debian's build: playwright's own browser downloads cannot reach their host from here. */
export const CHROMIUM = process.env.SANDBOX_CHROMIUM ?? '/usr/bin/chromium';

/**
 * Debian's chromium, installed when missing (test/helpers/apt.ts). Installing takes minutes:
 * callers give their setup hook APT_INSTALL_TIMEOUT_MS.
 */
export const ensureChromium = (): Promise<string> =>
  ensureDebianPackages({ packages: ['chromium'], neededFor: `The browser tests need Chromium at ${CHROMIUM}`, find: () => (existsSync(CHROMIUM) ? CHROMIUM : undefined) });

/**
 * The machine's network is closed: without these, Chromium waits on update, sync and QUIC
 * connections that never answer. A fresh profile per browser keeps runs independent.
 */
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

export interface TestBrowser {
  /** One browser (a persistent context on a fresh profile); each test opens its own pages. */
  context: BrowserContext;
  close(): Promise<void>;
}

export async function launchChromium(): Promise<TestBrowser> {
  const executablePath = await ensureChromium();
  const profile = mkdtempSync(join(tmpdir(), 'sandbox-chromium-'));
  // playwright passes the profile to Chromium as --user-data-dir.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: FLAGS,
    viewport: { width: WIDTHS.desktop, height: 800 },
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

export const WIDTHS = { desktop: 1280, phone: 390 } as const;

const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));

/** Full-page PNG under test-artifacts/ (gitignored), named for what it shows. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/**
 * Words of the page's text that the layout split across lines: each whitespace-separated word
 * (hyphenated ones split at their hyphens, where a line may end) must sit on one line. Text
 * inside `ids` (long identifiers, marked breakable) may break, but only where it is wider
 * than the block it sits in, so it could not fit on one line; code (`pre`, `code`) is not
 * words and is not checked.
 */
export async function brokenWords(page: Page, selector: string, ids?: string): Promise<string[]> {
  return page.evaluate(
    ([sel, idSelector]) => {
      const blockOf = (el: Element | null): Element | null => {
        for (let at = el; at; at = at.parentElement) if (getComputedStyle(at).display !== 'inline') return at;
        return null;
      };
      const broken: string[] = [];
      for (const root of document.querySelectorAll(sel)) {
        const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          const text = node.textContent ?? '';
          // Code (JSON bodies, wire requests) is machine text, not words: it wraps where it must.
          if (node.parentElement?.closest('pre, code')) continue;
          const id = idSelector ? node.parentElement?.closest(idSelector) : null;
          for (const match of text.matchAll(/[^\s-]+-?/g)) {
            const range = document.createRange();
            range.setStart(node, match.index ?? 0);
            range.setEnd(node, (match.index ?? 0) + match[0].replace(/-$/, '').length);
            const rects = [...range.getClientRects()].filter((r) => r.width > 0);
            if (new Set(rects.map((r) => Math.round(r.top))).size <= 1) continue;
            const block = id ? blockOf(id) : null;
            if (block && rects.reduce((sum, r) => sum + r.width, 0) > block.clientWidth) continue;
            broken.push(match[0]);
          }
        }
      }
      return broken;
    },
    [selector, ids ?? ''] as const,
  );
}

/**
 * A sandbox and Chromium for one browser test file, started together before its tests (the
 * first run may install Chromium) and closed after them; `started` hands both to the file.
 */
export function sandboxAndChromium(overrides: Partial<Config>, started: (sandbox: TestSandbox, chromium: TestBrowser) => void): void {
  let sandbox: TestSandbox | undefined;
  let browser: TestBrowser | undefined;
  beforeAll(async () => {
    [sandbox, browser] = await Promise.all([startSandbox(overrides), launchChromium()]);
    started(sandbox, browser);
  }, APT_INSTALL_TIMEOUT_MS);
  afterAll(async () => {
    await browser?.close();
    await sandbox?.stop();
  });
}

/** A new page of `browser` at `width`, the console at `url` signed in with `secretKey` on view `hash`, its live stream on. */
export async function signedInPage(browser: TestBrowser, url: string, secretKey: string, width: number, hash = ''): Promise<Page> {
  const page = await browser.context.newPage();
  // A wait that never ends fails naming its locator, well before the test's own timeout.
  page.setDefaultTimeout(15_000);
  await page.setViewportSize({ width, height: 860 });
  await page.goto(`${url}/_sandbox/${hash}`);
  await page.getByLabel('Secret key').fill(secretKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('#live.on').waitFor();
  return page;
}
