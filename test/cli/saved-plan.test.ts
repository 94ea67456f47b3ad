import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from './plan-suite.js';
import { api, start, tempProject, type Running } from './watch-helpers.js';

/**
 * `sync --plan` applies what the reviewer saw, not just the same list of steps: records
 * written after `plan --out` that change what a step does to data (a drop that now loses
 * values, more values to backfill) refuse the saved plan. Against `schemasync serve` over
 * SQLite; needs `npm run build`.
 */
const ITEM = (extra: string) => `objects:\n  item:\n    attributes:\n      name: { type: text }\n${extra}`;

describe('sync --plan compares what each step does to data', () => {
  let dir: string;
  let server: Running;
  let baseUrl: string;
  let key: string;
  let env: Record<string, string>;
  const declare = (text: string) => writeFileSync(join(dir, 'schema', 'item.yaml'), text);
  const values = async () => {
    const r = await api(baseUrl, key, 'POST', '/records/item/search', {});
    return (r.body.data as { values: Record<string, unknown> }[]).map((x) => x.values);
  };

  beforeAll(async () => {
    dir = tempProject({ 'item.yaml': ITEM('      gone: { type: text }\n') });
    server = start(['serve', '--port', '0', '--no-rate-limit', '--quiet', '--data', join(dir, '.schemasync')], dir);
    baseUrl = (await server.waitFor(/(http:\/\/127\.0\.0\.1:\d+\/v1)/, 'the server banner'))[1]!;
    key = (JSON.parse(readFileSync(join(dir, '.schemasync', 'credentials.json'), 'utf8')) as { apiKey: string }).apiKey;
    env = { SCHEMASYNC_BASE_URL: baseUrl, SCHEMASYNC_API_KEY: key };
    expect((await cli(['sync', '--yes'], dir, env)).code).toBe(0);
  });

  afterAll(async () => {
    if (server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('a drop reviewed as losing nothing is refused once a record holds a value, naming the step', async () => {
    declare(ITEM(''));
    const out = join(dir, 'drop.json');
    const reviewed = await cli(['plan', '--out', out], dir, env);
    expect(reviewed.out).toMatch(/^  - item\.gone — no longer declared$/m);

    expect((await api(baseUrl, key, 'POST', '/records/item', { name: 'c', gone: 'precious' })).status).toBe(201);
    const s = await cli(['sync', '--yes', '--plan', out, '--allow-destructive'], dir, env);
    expect(s.code).toBe(1);
    expect(s.err).toMatch(/^Error: The instance changed since the plan was saved: item\.gone would now do something else than the saved plan shows \(destructive false → true, affected 0 → 1\); nothing was applied\.$/m);
    expect(s.out).not.toMatch(/Applied/);
    expect(await values()).toEqual([expect.objectContaining({ name: 'c', gone: 'precious' })]);

    // reviewed again, with the loss in view, it applies
    expect((await cli(['plan', '--out', out], dir, env)).out).toMatch(/- item\.gone \[destructive: 1 value\]/);
    const ok = await cli(['sync', '--yes', '--plan', out, '--allow-destructive'], dir, env);
    expect(ok.code, ok.err).toBe(0);
    expect(await values()).toEqual([{ name: 'c' }]);
  });

  it('a backfill reviewed for one empty value is refused when there are two', async () => {
    declare(ITEM('      note: { type: text }\n'));
    expect((await cli(['sync', '--yes'], dir, env)).code).toBe(0);
    declare(ITEM('      note: { type: text, required: true, default: n/a }\n'));
    const out = join(dir, 'backfill.json');
    expect((await cli(['plan', '--out', out], dir, env)).code).toBe(0);
    expect((await api(baseUrl, key, 'POST', '/records/item', { name: 'd' })).status).toBe(201);
    const s = await cli(['sync', '--yes', '--plan', out], dir, env);
    expect(s.code).toBe(1);
    expect(s.err).toMatch(/item\.note would now do something else than the saved plan shows \(affected 1 → 2, backfill 1 → 2\); nothing was applied/);
    expect((await values()).every((v) => v['note'] === undefined || v['note'] === null)).toBe(true);
  });

  it('the destructive refusal names each sample id once', async () => {
    declare(ITEM('      code: { type: text }\n'));
    expect((await cli(['sync', '--yes'], dir, env)).code).toBe(0);
    const made = await api(baseUrl, key, 'POST', '/records/item', { name: 'e', code: 'abc' });
    const id = (made.body.data as { id: string }).id;
    declare(ITEM('      code: { type: integer }\n'));
    const s = await cli(['sync', '--yes'], dir, env);
    expect(s.code).toBe(1);
    const line = s.err.split('\n').find((l) => l.startsWith('  - item.code:'));
    expect(line, s.err).toBeDefined();
    expect(line!.split(id).length - 1, line).toBe(1);
  });
});
