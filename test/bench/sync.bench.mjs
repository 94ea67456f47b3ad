// Sync engine at scale (issue 4 "Performance"): a declaration of 1,000 objects × 50
// attributes. Prints: YAML load alone (the baseline), plan+apply into an empty store,
// a no-op re-plan (pure planner, and the store's whole dry run) as a ratio to the load,
// and a one-attribute change applied, in the store and through the real route
// (PUT /v1/schema/sources/:id on a createServer instance over the same store, with 1,000
// records in the changed object): an added attribute and a type change.
// Targets: no-op plan ≤ 1.5× load; change < 100 ms on the server.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadProjectSync } from '../../dist/engine/declaration/load.js';
import { planHash, planPush } from '../../dist/engine/plan/index.js';
import { openSqliteStore, openStore } from '../../dist/engine/store/index.js';
import { createServer } from '../../dist/engine/server/app.js';
import { checkTarget } from './target.mjs';

const OBJECTS = Number(process.env.BENCH_OBJECTS ?? 1000);
const ATTRS = 50;
const TYPES = ['text', 'integer', 'number', 'boolean', 'date', 'email', 'url', 'json'];

const dir = mkdtempSync(join(tmpdir(), 'ss-bench-sync-'));
mkdirSync(join(dir, 'schema'));
writeFileSync(join(dir, 'schemasync.yaml'), 'source: bench\nschema: schema\n');
const PER_FILE = 50;
for (let f = 0; f < OBJECTS / PER_FILE; f++) {
  let y = 'objects:\n';
  for (let o = f * PER_FILE; o < (f + 1) * PER_FILE; o++) {
    y += `  obj_${o}:\n    label: Object ${o}\n    attributes:\n`;
    for (let a = 0; a < ATTRS; a++) {
      const t = TYPES[a % TYPES.length];
      y += `      a_${a}: { type: ${t}${a % 7 === 0 ? ', required: true' : ''}${t === 'text' ? ', maxLength: 200' : ''} }\n`;
    }
  }
  writeFileSync(join(dir, 'schema', `part_${f}.yaml`), y);
}

const time = async (fn) => {
  const t0 = performance.now();
  const out = await fn();
  return [performance.now() - t0, out];
};
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x) => `${x.toFixed(1)} ms`;

// baseline: loading and validating the YAML alone
const loads = [];
let declaration;
for (let i = 0; i < 5; i++) {
  const [t, r] = await time(() => loadProjectSync({ cwd: dir }));
  if (!r.declaration) throw new Error(`declaration invalid: ${JSON.stringify(r.diagnostics.slice(0, 3))}`);
  declaration = r.declaration;
  loads.push(t);
}
const load = median(loads);
console.log(`declaration: ${OBJECTS} objects × ${ATTRS} attributes`);
console.log(`YAML load + validate (baseline, median of 5): ${ms(load)}`);

const store = openStore({ path: join(dir, 'bench.db') });
try {
  // The pure planner's inputs as the push reads them, from a second store on the same file;
  // its data probe (facts) answers each planner question from what it read before the run.
  const core = openSqliteStore({ path: join(dir, 'bench.db'), filesDir: false }).store;
  const probed = async (run) => core.probe(run);
  // planHash (issue 19) on the biggest plan there is: the first push, one create step per
  // object carrying all its attributes. Baseline: the pure planner making that plan.
  {
    const plans = [];
    const hashes = [];
    for (let i = 0; i < 5; i++) {
      const objects = await core.listObjects();
      const [tp, plan] = await time(() => probed((facts) => planPush({ sourceId: 'bench', declaration, objects, views: [], source: undefined, facts })));
      plans.push(tp);
      hashes.push((await time(() => planHash(plan.steps)))[0]);
    }
    const [p, h] = [median(plans), median(hashes)];
    const ok = h <= 0.5 * p;
    console.log(`planHash of the first-push plan (${OBJECTS} create steps): ${ms(h)}  ratio to planning it ${(h / p).toFixed(2)}× (target ≤ 0.5×) ${ok ? 'OK' : 'OVER'}`);
    if (!ok) process.exitCode = 1;
  }
  const [apply] = await time(() => store.pushSource('bench', declaration, {}));
  console.log(`plan + apply into an empty store: ${ms(apply)}`);

  const pure = [];
  const dry = [];
  for (let i = 0; i < 5; i++) {
    const [tp, plan] = await time(async () => {
      const [objects, views, source] = [await core.listObjects(), await core.listViews(), await core.findSource('bench')];
      return probed((facts) => planPush({ sourceId: 'bench', declaration, objects, views, source, facts }));
    });
    if (plan.steps.length !== 0) throw new Error(`no-op re-plan has ${plan.steps.length} steps: ${JSON.stringify(plan.steps[0])}`);
    pure.push(tp);
    const [td] = await time(() => store.pushSource('bench', declaration, { dryRun: true }));
    dry.push(td);
  }
  const p = median(pure);
  const d = median(dry);
  await core.close();
  console.log(`no-op re-plan (stored schema read + pure planner, median of 5): ${ms(p)}  ratio to load ${(p / load).toFixed(2)}× (target ≤ 1.5×)`);
  checkTarget('no-op re-plan vs loading the YAML', p / load <= 1.5, `${(p / load).toFixed(2)}× (≤ 1.5×)`);
  console.log(`no-op re-plan via store dry run: ${ms(d)}  ratio to load ${(d / load).toFixed(2)}×`);
  console.log(`no-op re-plan end to end (load + dry run) vs load: ${((load + d) / load).toFixed(2)}×`);

  // Median of 5 pushes, each adding one more attribute to what the store holds: one push
  // alone swung 71–133 ms between runs on this shared machine.
  const changed = structuredClone(declaration);
  const target = `obj_${Math.floor(OBJECTS / 2)}`;
  const ones = [];
  for (let i = 0; i < 5; i++) {
    changed.objects[target].attributes[`extra_${i}`] = { type: 'text' };
    const [t, res] = await time(() => store.pushSource('bench', changed, {}));
    if (res.plan.steps.length !== 1) throw new Error(`expected one step, got ${res.plan.steps.length}`);
    ones.push(t);
  }
  const one = median(ones);
  console.log(`one-attribute change applied: ${ms(one)} (median of 5; target < 100 ms)`);
  checkTarget('one-attribute change in the store', one < 100, `${ms(one)} (< 100 ms)`);
  await throughRoute(store, changed, target); // the store now holds `changed`
} finally {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}

/**
 * The one-attribute change as a client sees it: PUT /v1/schema/sources/bench with the whole
 * declaration (JSON body of every object) on a real server. Each measured push is undone
 * by the next one, so every sample changes exactly one attribute of the same store.
 */
async function throughRoute(store, declaration, target) {
  const actor = { keyId: 'bench', role: 'owner', scopes: null };
  const rows = Array.from({ length: 1000 }, (_, i) => ({ a_1: i, a_2: i / 2, a_3: i % 2 === 0, a_8: `t${i}` }));
  for (const r of rows) await store.createRecord(target, fill(declaration.objects[target], r), actor);
  const key = (await store.createKey({ name: 'bench', role: 'owner', scopes: null })).secret;
  const app = await createServer({ store, rateLimit: false, logger: false });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address();
  const put = async (decl) => {
    const body = JSON.stringify({ declaration: decl });
    const t0 = performance.now();
    const res = await fetch(`http://127.0.0.1:${port}/v1/schema/sources/bench`, {
      method: 'PUT', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body,
    });
    const json = await res.json();
    const t = performance.now() - t0;
    if (res.status !== 200) throw new Error(`push answered ${res.status}: ${JSON.stringify(json).slice(0, 300)}`);
    return [t, json.data.plan.steps.length, body.length];
  };
  try {
    const added = structuredClone(declaration);
    added.objects[target].attributes.extra_route = { type: 'text' };
    const retyped = structuredClone(declaration);
    retyped.objects[target].attributes.a_1 = { type: 'number' };
    const addTimes = [];
    const typeTimes = [];
    const noop = [];
    let bytes = 0;
    for (let i = 0; i < 5; i++) {
      const [tn, nn, b] = await put(declaration);
      if (nn !== 0) throw new Error(`no-op push has ${nn} steps`);
      noop.push(tn);
      bytes = b;
      const [ta, na] = await put(added);
      const [, nd] = await put(declaration); // drops the empty attribute again
      const [tt, nt] = await put(retyped);
      const [, nb] = await put(declaration); // number → integer back (values are whole)
      if (na !== 1 || nd !== 1 || nt !== 1 || nb !== 1) throw new Error(`expected one step per push, got ${[na, nd, nt, nb]}`);
      addTimes.push(ta);
      typeTimes.push(tt);
    }
    // the same type change in the store alone (no HTTP, no body parse/validation)
    const storeType = [];
    for (let i = 0; i < 5; i++) {
      const [tt] = await time(() => store.pushSource('bench', retyped, {}));
      storeType.push(tt);
      await store.pushSource('bench', declaration, {});
    }
    const n = median(noop);
    const a = median(addTimes);
    const t = median(typeTimes);
    console.log(`through PUT /v1/schema/sources/:id (body ${(bytes / 1e6).toFixed(1)} MB, ${target} holds 1,000 records; median of 5):`);
    console.log(`  no-op push (baseline: body transfer + parse + plan): ${ms(n)}`);
    console.log(`  add one attribute: ${ms(a)} (target < 100 ms); ratio to no-op push ${(a / n).toFixed(2)}×`);
    console.log(`  change one attribute's type (integer → number, 1,000 values converted): ${ms(t)} (target < 100 ms); ratio to no-op push ${(t / n).toFixed(2)}×`);
    checkTarget('add one attribute through the route', a < 100, `${ms(a)} (< 100 ms)`);
    checkTarget('type change through the route', t < 100, `${ms(t)} (< 100 ms)`);
    console.log(`  the same type change in the store alone: ${ms(median(storeType))}`);
  } finally {
    await app.close();
  }
}

/** Values for every required attribute of the object, so the records are valid. */
function fill(decl, values) {
  const out = { ...values };
  for (const [name, spec] of Object.entries(decl.attributes)) {
    if (!spec.required || out[name] !== undefined) continue;
    out[name] = { text: 'x', integer: 1, number: 1, boolean: true, date: '2026-01-01', email: 'a@b.co', url: 'https://x.io', json: {} }[spec.type];
  }
  return out;
}
