import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { start, tempProject, type Running } from '../cli/watch-helpers.js';
import { serve, type Served } from './harness.js';

/**
 * How `serve` and `dev` offer Studio (contract.md §9): on by default at /_/, the address
 * printed at start, `--no-studio` turns it off. The built CLI, as a user runs it.
 */
describe('Studio from serve and dev', () => {
  let running: Running | undefined;
  let served: Served | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    if (running && running.child.exitCode === null) {
      running.child.kill('SIGTERM');
      await running.exited;
    }
    await served?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
    running = served = dir = undefined;
  });

  it('dev prints Studio’s address at start, and the page is there', async () => {
    dir = tempProject({ 'deal.yaml': 'objects:\n  deal:\n    attributes:\n      title: { type: text }\n' });
    running = start(['dev', '--port', '0', '--no-rate-limit'], dir);
    const url = (await running.waitFor(/studio: (http:\/\/\S+\/_\/)/, 'the studio line'))[1]!;
    const base = (await running.waitFor(/server on (http:\/\/\S+)\/v1/, 'the server banner'))[1]!;
    expect(url).toBe(`${base}/_/`);
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<script type="module" src="main.js">');
  });

  it('--no-studio serves no page and prints no address; the API is untouched', async () => {
    served = await serve(['--no-studio']);
    expect(served.stdout()).not.toContain('studio:');
    const page = await fetch(`${served.origin}/_/`);
    expect(page.status).toBe(404);
    expect((await page.json()).code).toBe('ROUTE_NOT_FOUND');
    expect((await fetch(`${served.base}/health`)).status).toBe(200);
  });

  it('the page’s own files do not count against the API’s rate limit', async () => {
    // with the hosted limits on: 100 a minute in the default bucket
    served = await serve([], { rateLimit: true });
    for (let i = 0; i < 120; i++) expect((await fetch(`${served.origin}/_/main.js`)).status).toBe(200);
    expect((await fetch(`${served.base}/schema/objects`, { headers: { authorization: `Bearer ${served.ownerKey}` } })).status).toBe(200);
  });
});
