// Where a single-record create over HTTP spends its time: runs the create-vs-bare load on
// one built checkout's server started with --cpu-prof, then prints the server's top
// functions by self and by inclusive time, and self time by module (our files, each
// package, Node internals). Not a benchmark (it measures nothing against a baseline):
// `node test/bench/compare/profile-create.mjs [checkout] [seconds]`; PROFILE_TOP=n rows.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { measureCreate } from './http-create.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const checkout = resolve(process.argv[2] ?? root);
const seconds = Number(process.argv[3] ?? 8);
const TOP = Number(process.env.PROFILE_TOP ?? 25);

const dir = mkdtempSync(join(tmpdir(), 'ss-prof-'));
try {
  const r = await measureCreate('ours', { seconds, checkout, execArgv: ['--cpu-prof', `--cpu-prof-dir=${dir}`] });
  console.log(`${checkout}: ${r.rps.toFixed(0)} creates/s under the profiler (slower than unprofiled), p50 ${r.p50} ms`);
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error('the server wrote no profile');
  report(JSON.parse(readFileSync(join(dir, file), 'utf8')));
} finally {
  rmSync(dir, { recursive: true, force: true });
}

function report(profile) {
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
  console.log(`busy ${total.toFixed(0)} ms, idle ${idle.toFixed(0)} ms`);
  top(self, 'self time by function');
  top(mod, 'self time by module');
  top(incl, 'inclusive time by function');
}
