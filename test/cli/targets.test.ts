import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../engine/store/types.js';
import { startTestServer, type TestServer } from '../api/helpers.js';
import { cli } from './plan-suite.js';
import { tempProject } from './watch-helpers.js';

/**
 * Targets (contract.md §7) and the sealed push (§3 expectPlan) through the real CLI
 * process against a real server. Needs `npm run build`.
 */
const DEAL = (extra = '      amount: { type: number }\n') => `objects:\n  deal:\n    attributes:\n      title: { type: text }\n${extra}`;
const actor = { keyId: 'test', role: 'owner', scopes: null };

let dir: string;
let servers: TestServer[] = [];
/** Set by a test: runs inside the server between the CLI's dry run and its push. */
let between: (() => unknown) | undefined;

/** The store, with a hook at the one moment the race needs: a real push carrying expectPlan. */
const racing = (inner: Store): Store =>
  new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop === 'pushSource') {
        return async (id: string, decl: never, options: { dryRun?: boolean; expectPlan?: string }) => {
          if (!options.dryRun && options.expectPlan !== undefined && between) {
            const once = between;
            between = undefined;
            await once();
          }
          return target.pushSource(id, decl, options);
        };
      }
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });

beforeEach(async () => {
  dir = tempProject({ 'deal.yaml': DEAL() });
});
afterEach(async () => {
  between = undefined;
  for (const s of servers) await s.close();
  servers = [];
  rmSync(dir, { recursive: true, force: true });
});

async function server(): Promise<TestServer> {
  const s = await startTestServer({ wrap: racing });
  servers.push(s);
  return s;
}
const project = (targets: string) => writeFileSync(join(dir, 'schemasync.yaml'), `source: crm\nschema: schema\n${targets}`);
const declare = (text: string) => writeFileSync(join(dir, 'schema', 'deal.yaml'), text);

/** Synced once with one amount stored; the files now drop deal.amount (a loss of 1 value). */
async function syncedThenDropping() {
  const s = await server();
  const env = { SCHEMASYNC_BASE_URL: s.base, SCHEMASYNC_API_KEY: s.ownerKey };
  expect((await cli(['sync', '--yes'], dir, env)).code).toBe(0);
  await s.store.createRecord('deal', { title: 'a', amount: 1 }, actor);
  declare(DEAL(''));
  return { s, env };
}

describe('a record written between the dry run and the push (expectPlan)', () => {
  it('sync: the instance refuses the push whose losses grew since the plan shown; nothing changes', async () => {
    const { s, env } = await syncedThenDropping();
    between = () => s.store.createRecord('deal', { title: 'b', amount: 2 }, actor);
    const r = await cli(['sync', '--yes', '--allow-destructive', 'deal.amount'], dir, env);
    expect(r.out).toMatch(/- deal\.amount \[destructive: 1 value\]/); // what the user was shown
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^Error: 409 SCHEMA_CONFLICT: The plan changed since it was reviewed .*drop_attribute deal\.amount \(destructive, 2 affected\)/m);
    expect((await s.store.findObject('deal'))!.attributes.map((a) => a.name)).toContain('amount');
    expect((await s.store.sourceHistory('crm')).entries).toHaveLength(1);
  });

  it('sync --plan: a reviewed plan is applied exactly or not at all', async () => {
    const { s, env } = await syncedThenDropping();
    const out = join(dir, 'plan.json');
    expect((await cli(['plan', '--out', out], dir, env)).code).toBe(0);
    const saved = JSON.parse(readFileSync(out, 'utf8')) as { planHash: string; plan: { planHash: string } };
    expect(saved.planHash).toMatch(/^[0-9a-f]{64}$/);
    expect(saved.planHash).toBe(saved.plan.planHash);
    between = () => s.store.createRecord('deal', { title: 'b', amount: 2 }, actor);
    const r = await cli(['sync', '--yes', '--plan', out, '--allow-destructive', 'deal.amount'], dir, env);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/409 SCHEMA_CONFLICT: The plan changed since it was reviewed/);
    expect((await s.store.findObject('deal'))!.attributes.map((a) => a.name)).toContain('amount');
  });

  it('--plan older than the source: refused, naming the pushes made since', async () => {
    const s = await server();
    const env = { SCHEMASYNC_BASE_URL: s.base, SCHEMASYNC_API_KEY: s.ownerKey };
    const out = join(dir, 'plan.json');
    expect((await cli(['plan', '--out', out], dir, env)).code).toBe(0);
    expect((await cli(['sync', '--yes'], dir, env)).code).toBe(0);
    const r = await cli(['sync', '--yes', '--plan', out], dir, env);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/changed since the plan was saved \(planned against version 0, now 1\): pushed since: v1 at \S+ by key "test owner" \(1 create, 0 change, 0 drop\)/);
  });
});

describe('picking a target', () => {
  it('an unknown --target or SCHEMASYNC_TARGET: did-you-mean, exit 1, nothing sent', async () => {
    project('targets:\n  staging: { baseUrl: "http://127.0.0.1:9/v1" }\n  prod: { baseUrl: "http://127.0.0.1:9/v1" }\n');
    const flag = await cli(['plan', '--target', 'prdo'], dir);
    expect(flag.code).toBe(1);
    expect(flag.err).toBe('Error: Unknown target "prdo" (--target): schemasync.yaml has "staging", "prod".\n  hint: Did you mean "prod"? (--target prod)\n');
    const env = await cli(['sync', '--yes'], dir, { SCHEMASYNC_TARGET: 'stagin' });
    expect(env.code).toBe(1);
    expect(env.err).toMatch(/Unknown target "stagin" \(SCHEMASYNC_TARGET\).*\n.*Did you mean "staging"/);
  });

  it('--target > SCHEMASYNC_TARGET > SCHEMASYNC_BASE_URL > the dev target > baseUrl; apiKeyEnv gives the key', async () => {
    const [a, b] = [await server(), await server()];
    project(`baseUrl: "http://127.0.0.1:9/v1"\ntargets:\n  dev: { baseUrl: "${a.base}", apiKeyEnv: A_KEY }\n  other: { baseUrl: "${b.base}", apiKeyEnv: B_KEY }\n`);
    const keys = { A_KEY: a.ownerKey, B_KEY: b.ownerKey };
    const on = async (args: string[], env: Record<string, string>) => {
      const r = await cli([...args, 'plan', '--format', 'json'], dir, { ...keys, ...env });
      expect(r.code, r.err).toBe(0);
      return r;
    };
    expect((await on([], {})).code).toBe(0); // the dev target: a, with A_KEY
    expect((await cli(['sync', '--yes'], dir, keys)).code).toBe(0);
    expect((await a.store.findSource('crm'))?.version).toBe(1);
    expect(await b.store.findSource('crm')).toBeUndefined();
    expect((await cli(['sync', '--yes'], dir, { ...keys, SCHEMASYNC_TARGET: 'other' })).code).toBe(0);
    expect((await b.store.findSource('crm'))?.version).toBe(1);
    declare(DEAL('      stage: { type: text }\n'));
    // the flag wins over the env
    expect((await cli(['--target', 'dev', 'sync', '--yes'], dir, { ...keys, SCHEMASYNC_TARGET: 'other' })).code).toBe(0);
    expect([(await a.store.findSource('crm'))?.version, (await b.store.findSource('crm'))?.version]).toEqual([2, 1]);
    // an explicit base URL outranks the implicit dev target
    const viaEnv = await cli(['sync', '--yes'], dir, { SCHEMASYNC_BASE_URL: b.base, SCHEMASYNC_API_KEY: b.ownerKey });
    expect(viaEnv.code, viaEnv.err).toBe(0);
    expect((await b.store.findSource('crm'))?.version).toBe(2);
  });

  it("a local server's credentials key is never sent to a remote target", async () => {
    const [local, remote] = [await server(), await server()];
    mkdirSync(join(dir, '.schemasync'));
    writeFileSync(join(dir, '.schemasync', 'credentials.json'), JSON.stringify({ baseUrl: local.base, apiKey: local.ownerKey }));
    project(`targets:\n  prod: { baseUrl: "${remote.base}", apiKeyEnv: PROD_KEY }\n`);
    const r = await cli(['plan', '--target', 'prod'], dir);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^Error: 403 SCHEMA_ACTOR_CONTEXT_REQUIRED/m);
    expect((await cli(['plan', '--target', 'prod'], dir, { PROD_KEY: remote.ownerKey })).code).toBe(0);
  });

  it('a target policy: allowDestructive approves without a flag; plan --format markdown escapes what it quotes', async () => {
    const s = await server();
    project(`targets:\n  dev: { baseUrl: "${s.base}", apiKeyEnv: K, allowDestructive: [deal.amount] }\n`);
    const env = { K: s.ownerKey };
    expect((await cli(['sync', '--yes'], dir, env)).code).toBe(0);
    await s.store.createRecord('deal', { title: 'a', amount: 1 }, actor);
    declare(DEAL('      stage: { type: select, options: ["<img src=x onerror=alert(1)>", "a|b"] }\n'));
    const md = await cli(['plan', '--format', 'markdown', '--detailed-exitcode'], dir, env);
    expect(md.code).toBe(2);
    expect(md.out).not.toContain('<img');
    expect(md.out).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(md.out).toContain('a\\|b');
    declare(DEAL(''));
    const r = await cli(['sync', '--yes'], dir, env);
    expect(r.code, r.err).toBe(0);
    expect((await s.store.findObject('deal'))!.attributes.map((a) => a.name)).not.toContain('amount');
  });

  it('targets are validated like declarations: file:line:col and the near miss', async () => {
    project('targets:\n  prod:\n    baseUrl: "https://api.example.com/v1"\n    protect: [deal.amout]\n    wtch: false\n');
    const bad = await cli(['validate'], dir);
    expect(bad.code).toBe(1);
    expect(bad.out).toMatch(/^schemasync\.yaml:7:5 error SCHEMA_VALIDATION_FAILED Target "prod" in schemasync\.yaml has an unknown field "wtch" \(did you mean "watch"\?\)$/m);
    project('targets:\n  prod:\n    baseUrl: "https://api.example.com/v1"\n    protect: [deal.amout]\n');
    const warned = await cli(['validate'], dir);
    expect(warned.code).toBe(0);
    expect(warned.out).toMatch(/^schemasync\.yaml:6:15 warning Target "prod" protects "deal\.amout", which no declaration file declares \(object "deal" has no attribute "amout"\) \(did you mean "deal\.amount"\?\)$/m);
    expect((await cli(['validate', '--strict'], dir)).code).toBe(1);
  });

  it('watch and dev refuse a target with watch: false, and a remote target unless it says watch: true', async () => {
    project('targets:\n  prod: { baseUrl: "http://127.0.0.1:9/v1", watch: false }\n  remote: { baseUrl: "https://api.example.com/v1" }\n');
    const w = await cli(['watch', '--target', 'prod'], dir);
    expect(w.code).toBe(1);
    expect(w.err).toMatch(/^Error: Target "prod" does not allow watch \(watch: false in schemasync\.yaml\)\.$/m);
    const d = await cli(['dev', '--target', 'prod', '--port', '0'], dir);
    expect(d.code).toBe(1);
    expect(d.err).toMatch(/does not allow dev/);
    const r = await cli(['watch'], dir, { SCHEMASYNC_TARGET: 'remote' });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/Target "remote" does not allow watch \(not a loopback URL, and no watch: true/);
  });
});
