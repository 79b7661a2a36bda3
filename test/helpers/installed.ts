import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Every package installed under `modules` (scoped and nested ones too) that npm would run an
 * install-time script of: a preinstall, install or postinstall, or the node-gyp build npm runs
 * by itself for a binding.gyp.
 */
export function packagesWithInstallScripts(modules: string): string[] {
  const found: string[] = [];
  const visit = (dir: string): void => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
      const path = join(dir, entry.name);
      if (entry.name.startsWith('@')) {
        visit(path);
        continue;
      }
      const manifestPath = join(path, 'package.json');
      if (existsSync(manifestPath)) {
        const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { name?: string; version?: string; scripts?: Record<string, string> };
        // An empty script ("install": "", as @pact-foundation/pact-core has) is one npm does not run.
        const hooks = ['preinstall', 'install', 'postinstall'].filter((hook) => (manifest.scripts?.[hook] ?? '').trim() !== '');
        if (existsSync(join(path, 'binding.gyp'))) hooks.push('binding.gyp');
        if (hooks.length) found.push(`${manifest.name}@${manifest.version} (${hooks.join(', ')})`);
      }
      visit(join(path, 'node_modules'));
    }
  };
  visit(modules);
  return found;
}

/**
 * The API reference page of the sandbox at `url`, and each file it loads (scripts, styles), as
 * `path status`; a file under 100 bytes counts as missing (status 0).
 */
export async function referenceAssets(url: string): Promise<string[]> {
  const page = await fetch(`${url}/_sandbox/docs`);
  const assets = [...(await page.text()).matchAll(/(?:src|href)="(\/_sandbox\/docs\/[^"]+)"/g)].map((m) => m[1] ?? '');
  const lines = [`/_sandbox/docs ${page.status}`];
  for (const asset of assets) {
    const res = await fetch(`${url}${asset}`);
    const size = (await res.arrayBuffer()).byteLength;
    lines.push(`${asset} ${size > 100 ? res.status : 0}`);
  }
  return lines;
}
