import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { loadProjectSync } from '../../engine/declaration/load.js';
import { SchemaClient } from '../../engine/sdk/index.js';

/**
 * Studio test harness: the built CLI's `serve` as a child process on a free port over a
 * fresh data folder (exactly what a user runs), the example CRM pushed through the SDK,
 * and Debian's Chromium driven by playwright-core.
 */
export const ROOT = new URL('../../', import.meta.url).pathname;
export const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
export const SHOTS = join(ROOT, '.tmp', 'studio-shots');

export interface Served {
  base: string;
  origin: string;
  ownerKey: string;
  dataDir: string;
  stdout: () => string;
  client: SchemaClient;
  stop(): Promise<void>;
}

export async function serve(extra: string[] = [], options: { rateLimit?: boolean } = {}): Promise<Served> {
  if (!existsSync(join(ROOT, 'dist', 'studio', 'main.js'))) throw new Error('Studio is not built: run npm run build first');
  const dataDir = mkdtempSync(join(tmpdir(), 'schemasync-studio-'));
  const child: ChildProcess = spawn(process.execPath, [join(ROOT, 'bin', 'schemasync'), '--no-color', 'serve', '--port', '0', '--data', dataDir, ...(options.rateLimit ? [] : ['--no-rate-limit']), '--quiet', ...extra], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1' },
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const started = await new Promise<{ base: string; key: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start:\n${out}`)), 20_000);
    const check = () => {
      const base = /listening on (http:\/\/\S+\/v1)/.exec(out)?.[1];
      const key = /owner API key \(shown once\): (\S+)/.exec(out)?.[1];
      if (base && key) {
        clearTimeout(timer);
        resolve({ base, key });
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => reject(new Error(`serve exited ${code}:\n${out}`)));
  });
  const client = new SchemaClient({ baseUrl: started.base, apiKey: started.key });
  return {
    base: started.base,
    origin: started.base.replace(/\/v1$/, ''),
    ownerKey: started.key,
    dataDir,
    stdout: () => out,
    client,
    async stop() {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The example CRM of the README, pushed as source `crm`. */
export async function pushExample(client: SchemaClient): Promise<void> {
  const project = loadProjectSync({ configPath: join(ROOT, 'examples', 'crm', 'schemasync.yaml') });
  if (!project.declaration) throw new Error('examples/crm does not load');
  await client.sources.push('crm', project.declaration);
}

export async function launch(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (apt-get install -y chromium), as .ci/run does`);
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    // Root needs --no-sandbox; the rest keeps Chromium off the network. playwright gives
    // each launch a fresh temporary profile of its own.
    args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-quic', '--no-first-run'],
  });
}

export async function newPage(browser: Browser, size: { width: number; height: number } = { width: 1280, height: 800 }): Promise<{ context: BrowserContext; page: Page; dialogs: string[]; errors: string[] }> {
  const context = await browser.newContext({ viewport: size, acceptDownloads: true });
  const page = await context.newPage();
  // Under the test's own timeout, so a missing element fails with playwright's reason.
  page.setDefaultTimeout(10_000);
  const dialogs: string[] = [];
  const errors: string[] = [];
  // An alert would mean server text ran as script (the XSS check); a page error is a bug.
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  page.on('pageerror', (e) => errors.push(e.message));
  return { context, page, dialogs, errors };
}

export async function signIn(page: Page, origin: string, key: string): Promise<void> {
  await page.goto(`${origin}/_/`);
  await page.getByLabel('API key').fill(key);
  await page.getByLabel('API key').press('Enter');
}

export async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: false });
}
