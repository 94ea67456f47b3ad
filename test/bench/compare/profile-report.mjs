// A V8 CPU profile summed up: top functions by self and inclusive time, the callers of the
// heaviest, and self time by module (our files by dist path, each package, Node internals).
// Used by profile-create.mjs; `node profile-report.mjs <file.cpuprofile>` reads a saved one.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const TOP = Number(process.env.PROFILE_TOP ?? 25);

if (process.argv[1] === fileURLToPath(import.meta.url)) report(JSON.parse(readFileSync(process.argv[2], 'utf8')));

export function report(profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const where = (url) => {
    if (!url) return '(native)';
    if (url.startsWith('node:')) return 'node:internal';
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
    if (m) return m[1];
    const d = /\/dist\/(.*)$/.exec(url);
    return d ? d[1] : url.replace(/^file:\/\//, '');
  };
  const label = (n) => {
    const f = n.callFrame;
    return `${f.functionName || '(anonymous)'} ${where(f.url)}:${f.lineNumber + 1}`;
  };
  const self = new Map();
  const incl = new Map();
  const mod = new Map();
  const callers = new Map();
  let total = 0;
  let idle = 0;
  const add = (m, k, v) => m.set(k, (m.get(k) ?? 0) + v);
  profile.samples.forEach((id, i) => {
    const dt = (profile.timeDeltas[i] ?? 0) / 1000;
    const node = byId.get(id);
    const name = node.callFrame.functionName;
    if (name === '(idle)' || name === '(program)' || name === '(garbage collector)') {
      if (name === '(idle)') idle += dt;
      else add(self, name, dt);
      if (name !== '(idle)') total += dt;
      return;
    }
    total += dt;
    add(self, label(node), dt);
    add(mod, where(node.callFrame.url), dt);
    const up = parent.get(id);
    if (up !== undefined) add((callers.get(label(node)) ?? callers.set(label(node), new Map()).get(label(node))), label(byId.get(up)), dt);
    const seen = new Set();
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const k = label(byId.get(at));
      if (!seen.has(k)) {
        seen.add(k);
        add(incl, k, dt);
      }
    }
  });
  const pct = (v) => `${((100 * v) / total).toFixed(1).padStart(5)}%`;
  const top = (m, title) => {
    console.log(`\n${title}`);
    for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, TOP)) console.log(`  ${pct(v)} ${v.toFixed(0).padStart(6)} ms  ${k}`);
  };
  console.log(`busy ${total.toFixed(0)} ms, idle ${idle.toFixed(0)} ms (the measured window only)`);
  top(self, 'self time by function');
  console.log('\ncallers of the top 8 by self time');
  for (const [k] of [...self].sort((a, b) => b[1] - a[1]).filter(([k]) => callers.has(k)).slice(0, 8)) {
    const from = [...callers.get(k)].sort((a, b) => b[1] - a[1]).slice(0, 3);
    console.log(`  ${k}  ←  ${from.map(([c, v]) => `${c} (${pct(v).trim()})`).join(', ')}`);
  }
  top(mod, 'self time by module');
  top(incl, 'inclusive time by function');
}
