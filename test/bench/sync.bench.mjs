// Sync engine at scale (issue 4 "Performance"): a declaration of 1,000 objects × 50
// attributes. Prints: YAML load alone (the baseline), plan+apply into an empty store,
// a no-op re-plan (pure planner, and the store's whole dry run) as a ratio to the load,
// and a one-attribute change applied. Targets: no-op plan ≤ 1.5× load; change < 100 ms.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadProjectSync } from '../../dist/engine/declaration/load.js';
import { planPush } from '../../dist/engine/plan/index.js';
import { openStore } from '../../dist/engine/store/index.js';

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

const time = (fn) => {
  const t0 = performance.now();
  const out = fn();
  return [performance.now() - t0, out];
};
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x) => `${x.toFixed(1)} ms`;

// baseline: loading and validating the YAML alone
const loads = [];
let declaration;
for (let i = 0; i < 5; i++) {
  const [t, r] = time(() => loadProjectSync({ cwd: dir }));
  if (!r.declaration) throw new Error(`declaration invalid: ${JSON.stringify(r.diagnostics.slice(0, 3))}`);
  declaration = r.declaration;
  loads.push(t);
}
const load = median(loads);
console.log(`declaration: ${OBJECTS} objects × ${ATTRS} attributes`);
console.log(`YAML load + validate (baseline, median of 5): ${ms(load)}`);

const store = openStore({ path: join(dir, 'bench.db') });
try {
  const [apply] = time(() => store.pushSource('bench', declaration, {}));
  console.log(`plan + apply into an empty store: ${ms(apply)}`);

  const pure = [];
  const dry = [];
  for (let i = 0; i < 5; i++) {
    const [tp, plan] = time(() =>
      planPush({
        sourceId: 'bench', declaration, objects: store.listObjects(), views: store.listViews(),
        source: store.findSource('bench'), facts: store.facts(),
      }),
    );
    if (plan.steps.length !== 0) throw new Error(`no-op re-plan has ${plan.steps.length} steps: ${JSON.stringify(plan.steps[0])}`);
    pure.push(tp);
    const [td] = time(() => store.pushSource('bench', declaration, { dryRun: true }));
    dry.push(td);
  }
  const p = median(pure);
  const d = median(dry);
  console.log(`no-op re-plan (stored schema read + pure planner, median of 5): ${ms(p)}  ratio to load ${(p / load).toFixed(2)}× (target ≤ 1.5×)`);
  console.log(`no-op re-plan via store dry run: ${ms(d)}  ratio to load ${(d / load).toFixed(2)}×`);
  console.log(`no-op re-plan end to end (load + dry run) vs load: ${((load + d) / load).toFixed(2)}×`);

  const changed = structuredClone(declaration);
  const target = `obj_${Math.floor(OBJECTS / 2)}`;
  changed.objects[target].attributes.extra = { type: 'text' };
  const [one, res] = time(() => store.pushSource('bench', changed, {}));
  if (res.plan.steps.length !== 1) throw new Error(`expected one step, got ${res.plan.steps.length}`);
  console.log(`one-attribute change applied: ${ms(one)} (target < 100 ms) ${one < 100 ? 'OK' : 'OVER'}`);
} finally {
  store.close();
  rmSync(dir, { recursive: true, force: true });
}
