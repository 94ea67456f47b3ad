import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SchemaClient } from '../../engine/sdk/index.js';
import { expectError, startTestServer, type Decl, type TestServer } from './helpers.js';

/**
 * Review and deploy from CI (issue 19, contract.md §3): planHash in every plan, expectPlan
 * checked inside the push's transaction, and the push history the instance keeps.
 */
let s: TestServer | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

const v1: Decl = { objects: { deal: { attributes: { title: { type: 'text' }, amount: { type: 'number' } } } }, views: {} };
const v2: Decl = { objects: { deal: { attributes: { title: { type: 'text' } } } }, views: {} };
const put = (body: Record<string, unknown>, headers: Record<string, string> = {}) => s!.call('PUT', '/schema/sources/crm', { body, headers });
const dryHash = async (decl: Decl): Promise<string> => {
  const r = await put({ declaration: decl, dryRun: true });
  expect(r.status, r.text).toBe(200);
  return r.body.data.plan.planHash as string;
};
const deal = async (values: Record<string, unknown>) => expect((await s!.call('POST', '/records/deal', { body: values })).status).toBe(201);

describe('planHash and expectPlan', () => {
  it('every plan carries a stable hash of its steps that moves with the data it loses', async () => {
    s = await startTestServer();
    const first = await dryHash(v1);
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    expect(await dryHash(v1)).toBe(first);
    expect((await put({ declaration: v1 })).body.data.plan.planHash).toBe(first);
    const empty = await dryHash(v2);
    await deal({ title: 'a', amount: 5 });
    expect(await dryHash(v2)).not.toBe(empty);
  });

  it('a malformed expectPlan is a 400 naming the field; nothing changes', async () => {
    s = await startTestServer();
    const r = await put({ declaration: v1, expectPlan: 'abc' });
    expect(r.status).toBe(400);
    expect(r.body.message).toBe('Validation failed');
    expect(JSON.stringify(r.body.errors)).toContain('expectPlan');
    expectError(await s.call('GET', '/schema/sources/crm'), { status: 404, code: 'SCHEMA_SOURCE_NOT_FOUND' });
  });

  it('a record written between the reviewed dry run and the push changes affected: the push is refused whole', async () => {
    s = await startTestServer();
    await put({ declaration: v1 });
    await deal({ title: 'a', amount: 5 });
    const reviewed = await dryHash(v2); // the reviewer saw: drop deal.amount, 1 value lost
    await deal({ title: 'b', amount: 7 }); // ...then someone writes a second value
    const r = await put({ declaration: v2, allowDestructive: ['deal.amount'], expectPlan: reviewed }, { 'if-match': '"1"' });
    expectError(r, { status: 409, code: 'SCHEMA_CONFLICT' });
    expect(r.body.message).toContain('drop_attribute deal.amount (destructive, 2 affected)');
    const src = (await s.call('GET', '/schema/sources/crm')).body.data;
    expect(src.version).toBe(1);
    expect(Object.keys(src.declaration.objects.deal.attributes)).toEqual(['title', 'amount']);
    expect((await s.call('GET', '/schema/sources/crm/history')).body.data).toHaveLength(1);
    // the plan the reviewer sees now applies
    const again = await dryHash(v2);
    expect((await put({ declaration: v2, allowDestructive: ['deal.amount'], expectPlan: again })).status).toBe(200);
  });

  it('two CI jobs pushing the same reviewed plan at once: exactly one applies', async () => {
    s = await startTestServer();
    await put({ declaration: v1 });
    await deal({ title: 'a', amount: 5 });
    const reviewed = await dryHash(v2);
    const body = { declaration: v2, allowDestructive: ['deal.amount'], expectPlan: reviewed };
    const answers = await Promise.all([put(body), put(body), put(body)]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409]);
    const history = (await s.call('GET', '/schema/sources/crm/history')).body.data;
    expect(history.map((h: { version: number }) => h.version)).toEqual([2, 1]);
  });

  // Pushes run one at a time (engine/store/sql/write-policy.ts schemaWrite): on PostgreSQL,
  // retried pushes used to deadlock over the record table's locks again and again (one round
  // in three hung for over 15 s on a busy machine). Each round is a fresh source and object.
  it('round after round of three concurrent pushes of one reviewed plan: one applies, two are refused, none hangs', async () => {
    s = await startTestServer();
    for (let round = 0; round < 8; round++) {
      const decl = (withAmount: boolean): Decl => ({ objects: { [`deal${round}`]: { attributes: { title: { type: 'text' }, ...(withAmount ? { amount: { type: 'number' } } : {}) } } }, views: {} });
      const push = (body: Record<string, unknown>) => s!.call('PUT', `/schema/sources/crm${round}`, { body });
      expect((await push({ declaration: decl(true) })).status).toBe(200);
      expect((await s.call('POST', `/records/deal${round}`, { body: { title: 'a', amount: 5 } })).status).toBe(201);
      const reviewed = (await push({ declaration: decl(false), dryRun: true })).body.data.plan.planHash as string;
      const body = { declaration: decl(false), allowDestructive: [`deal${round}.amount`], expectPlan: reviewed };
      const answers = await Promise.all([push(body), push(body), push(body)]);
      expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409]);
    }
  });
});

describe('push history', () => {
  it('records version, time, key, plan hash, step counts and approved losses; pages by keyset; survives a restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'schemasync-history-'));
    try {
      s = await startTestServer({ dataDir });
      const keys = (await s.call('GET', '/keys')).body.data as { id: string; name: string }[];
      const client = new SchemaClient({ baseUrl: s.base, apiKey: await s.keyFor('admin') });
      const first = await client.sources.push('crm', v1 as never);
      await deal({ title: 'a', amount: 5 });
      const dry = await client.sources.push('crm', v2 as never, { dryRun: true });
      await client.sources.push('crm', v2 as never, { allowDestructive: ['deal.amount'], expectPlan: dry.plan.planHash });
      // a push that changes nothing is no history
      await client.sources.push('crm', v2 as never);
      const page1 = await client.sources.history('crm', { limit: 1 });
      expect(page1.entries).toEqual([
        {
          version: 2, appliedAt: expect.stringMatching(/^\d{4}-/), planHash: dry.plan.planHash,
          key: { id: expect.any(String), name: expect.any(String) }, steps: { create: 0, change: 0, drop: 1 }, destructive: ['deal.amount'],
        },
      ]);
      const ciKey = (await s.call('GET', '/keys')).body.data.find((k: { id: string }) => !keys.some((o) => o.id === k.id));
      expect(page1.entries[0]!.key).toEqual({ id: ciKey.id, name: ciKey.name });
      expect(page1.nextCursor).not.toBeNull();
      const page2 = await client.sources.history('crm', { limit: 1, cursor: page1.nextCursor! });
      expect(page2.entries.map((e) => [e.version, e.planHash, e.steps])).toEqual([[1, first.plan.planHash, { create: 1, change: 0, drop: 0 }]]);
      expect(page2.nextCursor).toBeNull();
      expectError(await s.call('GET', '/schema/sources/crm/history?cursor=zz'), { status: 400, code: 'SCHEMA_VALIDATION_FAILED' });
      expectError(await s.call('GET', '/schema/sources/nope/history'), { status: 404, code: 'SCHEMA_SOURCE_NOT_FOUND' });

      await s.close();
      s = await startTestServer({ dataDir });
      const after = (await s.call('GET', '/schema/sources/crm/history')).body.data;
      expect(after.map((h: { version: number }) => h.version)).toEqual([2, 1]);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('a refused or failed push leaves no history row', async () => {
    s = await startTestServer();
    await put({ declaration: v1 });
    await deal({ title: 'a', amount: 5 });
    expectError(await put({ declaration: v2 }), { status: 500, code: 'SCHEMA_DESTRUCTIVE_NOT_ALLOWED' });
    expectError(await put({ declaration: v2, allowDestructive: true }, { 'if-match': '"7"' }), { status: 409, code: 'SCHEMA_CONFLICT' });
    expect((await s.call('GET', '/schema/sources/crm/history')).body.data).toHaveLength(1);
  });
});
