import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Declaration } from '../../engine/model/declaration.js';
import type { Plan, Step } from '../../engine/plan/types.js';
import { createRunner, startWatchLoop, type LoadOutcome, type LoopEvent, type PushCall, type WatchLoop } from '../../engine/watch/loop.js';

const decl = (attrs: string[]): Declaration => ({
  objects: { deal: { attributes: Object.fromEntries(attrs.map((a) => [a, { type: 'text' as const }])) } },
  views: {},
});

const plan = (steps: Partial<Step>[] = [], conflicts: Plan['conflicts'] = []): Plan => ({
  source: 'crm',
  baseVersion: 1,
  planHash: '',
  steps: steps as Step[],
  conflicts,
  summary: { create: 0, change: 0, drop: 0, destructive: 0, conflicts: conflicts.length },
});

const ok = (declaration: Declaration): LoadOutcome => ({ source: 'crm', schema: 'schema', declaration, diagnostics: [] });

function fail(status: number, code: string | undefined, message: string) {
  return Object.assign(new Error(message), { status, code, message });
}

describe('one run', () => {
  it('pushes a valid declaration with the allowDestructive it was given and reports the plan', async () => {
    const events: LoopEvent[] = [];
    const calls: PushCall[] = [];
    const r = createRunner({
      load: async () => ok(decl(['title'])),
      push: async (_s, _d, call) => {
        calls.push(call);
        return { version: 7, applied: true, plan: plan([{ action: 'add_attribute', target: 'deal.title', destructive: false }]) };
      },
      emit: (e) => events.push(e),
    });
    expect((await r.runOnce()).outcome).toBe('synced');
    expect(calls).toEqual([{ dryRun: false, allowDestructive: false }]);
    const synced = events.find((e) => e.type === 'synced');
    expect(synced).toMatchObject({ source: 'crm', version: 7 });
  });

  it('reports declaration errors and does not push', async () => {
    const events: LoopEvent[] = [];
    let pushes = 0;
    const r = createRunner({
      load: async () => ({
        source: 'crm',
        diagnostics: [{ severity: 'error', message: 'Unknown type "strng"', file: 'schema/deal.yaml', line: 3, column: 13, suggestion: 'text' }],
      }),
      push: async () => {
        pushes++;
        throw new Error('unreachable');
      },
      emit: (e) => events.push(e),
    });
    expect((await r.runOnce()).outcome).toBe('invalid');
    expect(pushes).toBe(0);
    const invalid = events.find((e) => e.type === 'invalid');
    expect(invalid?.type === 'invalid' && invalid.diagnostics[0]?.line).toBe(3);
  });

  it('holds back a destructive push and names the steps, counts and the command that applies them', async () => {
    const events: LoopEvent[] = [];
    const calls: PushCall[] = [];
    const r = createRunner({
      load: async () => ok(decl([])),
      push: async (_s, _d, call) => {
        calls.push(call);
        if (!call.dryRun) throw fail(500, 'SCHEMA_DESTRUCTIVE_NOT_ALLOWED', 'Internal server error');
        return {
          version: 3,
          applied: false,
          plan: plan([
            { action: 'drop_attribute', target: 'deal.amount', destructive: true, affected: 12 },
            { action: 'add_attribute', target: 'deal.note', destructive: false },
          ]),
        };
      },
      emit: (e) => events.push(e),
      syncCommand: 'schemasync sync --config x/schemasync.yaml',
    });
    expect((await r.runOnce()).outcome).toBe('held');
    expect(calls.map((c) => c.dryRun)).toEqual([false, true]);
    const held = events.find((e) => e.type === 'held');
    expect(held?.type === 'held' && held.steps.map((s) => [s.target, s.affected])).toEqual([['deal.amount', 12]]);
    expect(held?.type === 'held' && held.command).toBe('schemasync sync --config x/schemasync.yaml --allow-destructive deal.amount');
  });

  it('shows every conflict of a refused push', async () => {
    const events: LoopEvent[] = [];
    const r = createRunner({
      load: async () => ok(decl(['title'])),
      push: async (_s, _d, call) => {
        if (!call.dryRun) throw fail(409, 'SCHEMA_SYNC_CONFLICT', 'deal.title is required but 3 records have none');
        return { version: 3, applied: false, plan: plan([], [{ code: 'SCHEMA_SYNC_CONFLICT', target: 'deal.title', message: 'required over nulls', fix: 'give it a default' }]) };
      },
      emit: (e) => events.push(e),
    });
    expect((await r.runOnce()).outcome).toBe('refused');
    const refused = events.find((e) => e.type === 'refused');
    expect(refused).toMatchObject({ failure: { status: 409, code: 'SCHEMA_SYNC_CONFLICT' }, conflicts: [{ target: 'deal.title' }] });
  });

  it('treats an unreachable server as retryable with growing delays, announced once, and says when it is back', async () => {
    const events: LoopEvent[] = [];
    let up = false;
    const r = createRunner({
      load: async () => ok(decl(['title'])),
      push: async () => {
        if (!up) throw fail(0, undefined, 'Could not connect to http://127.0.0.1:1/v1');
        return { version: 1, applied: true, plan: plan([]) };
      },
      emit: (e) => events.push(e),
    });
    const a = await r.runOnce();
    const b = await r.runOnce();
    expect(a).toEqual({ outcome: 'unreachable', retryInMs: 500 });
    expect(b).toEqual({ outcome: 'unreachable', retryInMs: 1000 });
    expect(events.filter((e) => e.type === 'unreachable').map((e) => e.type === 'unreachable' && e.first)).toEqual([true, false]);
    up = true;
    expect((await r.runOnce()).outcome).toBe('unchanged');
    expect(events.some((e) => e.type === 'reachable')).toBe(true);
  });
});

describe('the loop over real files', () => {
  let dir: string;
  let loop: WatchLoop | undefined;
  afterEach(async () => {
    await loop?.close();
    loop = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  /** load() parses our tiny format: one attribute name per line of schema/deal.txt.yaml. */
  function setup() {
    dir = mkdtempSync(join(tmpdir(), 'ss-loop-'));
    writeFileSync(join(dir, 'schemasync.yaml'), 'source: crm\nschema: schema\n');
    mkdirSync(join(dir, 'schema'));
    const file = join(dir, 'schema', 'deal.yaml');
    writeFileSync(file, 'title\n');
    const load = async (): Promise<LoadOutcome> => ok(decl(readFileSync(file, 'utf8').split('\n').filter(Boolean)));
    return { file, load };
  }

  it('syncs once at start, then once per burst with the latest state, never two at once', async () => {
    const { file, load } = setup();
    const pushed: string[][] = [];
    let active = 0;
    let maxActive = 0;
    const events: LoopEvent[] = [];
    loop = startWatchLoop({
      configPath: join(dir, 'schemasync.yaml'),
      debounceMs: 40,
      load,
      push: async (_s, d) => {
        active++;
        maxActive = Math.max(maxActive, active);
        await new Promise((r) => setTimeout(r, 30));
        pushed.push(Object.keys(d.objects['deal']?.attributes ?? {}));
        active--;
        return { version: pushed.length, applied: true, plan: plan([{ action: 'add_attribute', target: 'deal.x', destructive: false }]) };
      },
      emit: (e) => events.push(e),
    });
    await loop.ready;
    await loop.scheduler.idle();
    expect(pushed).toEqual([['title']]);
    for (let i = 1; i <= 20; i++) {
      writeFileSync(file, `title\nf${i}\n`);
      await new Promise((r) => setTimeout(r, 3));
    }
    for (let i = 0; i < 300 && pushed.at(-1)?.[1] !== 'f20'; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    await loop.scheduler.idle();
    expect(pushed.at(-1)).toEqual(['title', 'f20']);
    expect(maxActive).toBe(1);
    // How many runs the burst took depends on the machine's speed (the fake-clock tests in
    // watch-scheduler.test.ts pin the collapsing down); here: no overlap, last state wins.
    const order = events.filter((e) => e.type === 'run-start' || e.type === 'run-end').map((e) => e.type);
    for (let i = 0; i < order.length; i++) expect(order[i]).toBe(i % 2 === 0 ? 'run-start' : 'run-end');
  });
});
