import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';
import { mulberry32 } from '../support/random.js';

// A property of the permission check (issue 16): for random custom roles × random scopes ×
// routes, every answer is 403 exactly when the contract's role table (computed here, apart
// from engine/server/permissions.ts) refuses. A fixed seed always runs, plus random seeds,
// each printed on failure so a failing case can be replayed.

type Act = 'read' | 'create' | 'update' | 'delete';
type Need = { kind: 'record'; act: Act; object: string } | { kind: 'schema'; write: boolean } | { kind: 'files' } | { kind: 'keys' };
interface Role { schema: 'none' | 'read' | 'write'; permissions: { object: string; actions: Act[] }[] }
const SCOPES = ['records:read', 'records:write', 'schema:read', 'schema:write', 'files:read', 'files:write', 'keys:manage', 'search', 'mcp'] as const;
const OBJECTS = ['alpha', 'beta'];
const ACTS: Act[] = ['read', 'create', 'update', 'delete'];
const MISSING = '00000000-0000-4000-8000-000000000000';

/** The contract's table (§3 "What each built-in role may do", row "custom"), AND the key's scopes. */
function allowed(role: Role, scopes: readonly string[] | null, need: Need): boolean {
  const scope = need.kind === 'record' ? (need.act === 'read' ? 'records:read' : 'records:write')
    : need.kind === 'schema' ? (need.write ? 'schema:write' : 'schema:read')
    : need.kind === 'files' ? 'files:read' : 'keys:manage';
  if (scopes !== null && !scopes.includes(scope)) return false;
  switch (need.kind) {
    case 'record': return role.permissions.some((p) => (p.object === '*' || p.object === need.object) && p.actions.includes(need.act));
    case 'schema': return need.write ? role.schema === 'write' : role.schema !== 'none';
    case 'files': return true;
    case 'keys': return false;
  }
}


function randomCase(rnd: () => number): { role: Role; scopes: string[] | null } {
  const pick = <T,>(xs: readonly T[]): T[] => xs.filter(() => rnd() < 0.5);
  const permissions = [...OBJECTS, '*'].filter(() => rnd() < 0.45).map((object) => ({ object, actions: pick(ACTS) })).filter((p) => p.actions.length > 0);
  const schema = (['none', 'read', 'write'] as const)[Math.floor(rnd() * 3)]!;
  return { role: { schema, permissions }, scopes: rnd() < 0.4 ? null : pick(SCOPES) };
}

describe('custom roles × routes (property)', () => {
  let s: TestServer;
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    s = await startTestServer({ logger: false });
    for (const o of OBJECTS) {
      await s.defineObject(o, [{ name: 'n', type: 'integer' }]);
      ids[o] = (await s.call('POST', `/records/${o}`, { body: { n: 1 } })).body.data.id;
      await s.call('PUT', `/views/${o}_all`, { body: { object: o } });
    }
  });
  afterAll(async () => s.close());

  /** Routes with what each needs; requests that pass the check answer anything but 403. */
  const routes = (o: string): { call: [string, string, Record<string, unknown>?, Record<string, string>?]; need: Need }[] => [
    { call: ['GET', `/records/${o}/${ids[o]}`], need: { kind: 'record', act: 'read', object: o } },
    { call: ['POST', `/records/${o}/search`, {}], need: { kind: 'record', act: 'read', object: o } },
    { call: ['GET', `/views/${o}_all/records`], need: { kind: 'record', act: 'read', object: o } },
    { call: ['POST', `/records/${o}`, { n: 'not a number' }], need: { kind: 'record', act: 'create', object: o } },
    { call: ['POST', `/records/${o}/bulk-create`, { records: [{ n: 'x' }] }], need: { kind: 'record', act: 'create', object: o } },
    { call: ['PUT', `/records/${o}/${MISSING}`, { n: 2 }, { 'if-match': '*' }], need: { kind: 'record', act: 'update', object: o } },
    { call: ['DELETE', `/records/${o}/${MISSING}`], need: { kind: 'record', act: 'delete', object: o } },
    { call: ['POST', `/records/${o}/bulk-delete`, { ids: [MISSING] }], need: { kind: 'record', act: 'delete', object: o } },
  ];
  const global: { call: [string, string, Record<string, unknown>?]; need: Need }[] = [
    { call: ['GET', '/schema/objects'], need: { kind: 'schema', write: false } },
    { call: ['GET', '/roles'], need: { kind: 'schema', write: false } },
    { call: ['POST', '/schema/objects', { name: 'Bad Name' }], need: { kind: 'schema', write: true } },
    { call: ['GET', `/files/${MISSING}`], need: { kind: 'files' } },
    { call: ['POST', '/keys', { name: 'k', role: 'nosuch' }], need: { kind: 'keys' } },
  ];

  async function check(seed: number, cases: number): Promise<void> {
    const rnd = mulberry32(seed);
    for (let i = 0; i < cases; i++) {
      const { role, scopes } = randomCase(rnd);
      const name = `r${seed % 100000}_${i}`;
      expect((await s.call('POST', '/roles', { body: { name, ...role } })).status).toBe(201);
      const key = (await s.call('POST', '/keys', { body: { name, role: name, ...(scopes ? { scopes } : {}) } })).body.data.secret as string;
      for (const r of [...OBJECTS.flatMap(routes), ...global]) {
        const [method, path, body, headers] = r.call as [string, string, Record<string, unknown>?, Record<string, string>?];
        const answer = await s.call(method, path, { key, ...(body ? { body } : {}), ...(headers ? { headers } : {}) });
        const want = allowed(role, scopes, r.need);
        if ((answer.status === 403) === want) {
          throw new Error(`seed ${seed} case ${i}: ${method} ${path} answered ${answer.status} but the table says ${want ? 'allowed' : 'refused'}\nrole ${JSON.stringify(role)} scopes ${JSON.stringify(scopes)}`);
        }
        if (!want) expect(answer.body.message).toBe('You do not have permission to perform this action.');
      }
    }
  }

  it('a fixed seed', async () => {
    await check(20261124, 20);
  });

  it('random seeds (printed on failure)', async () => {
    for (let n = 0; n < 2; n++) await check(Math.floor(Math.random() * 2 ** 31), 6);
  });
});
