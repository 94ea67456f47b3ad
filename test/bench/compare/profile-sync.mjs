// Where the `sync-1000` case (cases.mjs) spends its time: the same store, declaration and
// pushes (one added attribute and one type change per push on an object of a 1,000-object
// source with 1,000 records, six pushes per store), repeated on fresh stores, with the V8
// profiler on over the pushes only. Not a benchmark (it measures nothing against a baseline):
// `node test/bench/compare/profile-sync.mjs [checkout] [stores]`; PROFILE_TOP=n rows,
// PROFILE_INTERVAL=µs between samples (100), PROFILE_SAVE=file keeps the merged profile.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { report } from './profile-report.mjs';
import { syncThousand } from './sync-case.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const checkout = resolve(process.argv[2] ?? root);
const stores = Number(process.argv[3] ?? 6);
const { openStore } = await import(pathToFileURL(join(checkout, 'dist/engine/store/index.js')).href);
const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.setSamplingInterval', { interval: Number(process.env.PROFILE_INTERVAL ?? 100) });

/** One fresh store, the case's six pushes; the profile of the pushes alone. */
async function once(times) {
  const dir = mkdtempSync(join(tmpdir(), 'ss-prof-sync-'));
  try {
    let profile;
    const beforePushes = () => session.post('Profiler.start');
    const afterPushes = async () => void ({ profile } = await session.post('Profiler.stop'));
    times.push(...(await syncThousand(openStore, join(dir, 'schemasync.db'), { beforePushes, afterPushes })));
    return profile;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Several profiles as one: node ids moved apart, samples and time deltas concatenated. */
function merge(profiles) {
  const out = { nodes: [], samples: [], timeDeltas: [] };
  profiles.forEach((p, k) => {
    const shift = (id) => id + k * 10_000_000;
    for (const n of p.nodes) out.nodes.push({ ...n, id: shift(n.id), children: (n.children ?? []).map(shift) });
    out.samples.push(...p.samples.map(shift));
    out.timeDeltas.push(...p.timeDeltas);
  });
  return out;
}

const times = [];
const profiles = [];
for (let s = 0; s < stores; s++) profiles.push(await once(times));
session.disconnect();
times.sort((a, b) => a - b);
console.log(`${checkout}: ${times.length} pushes under the profiler, median ${times[times.length >> 1].toFixed(1)} ms`);
const merged = merge(profiles);
if (process.env.PROFILE_SAVE) writeFileSync(process.env.PROFILE_SAVE, JSON.stringify(merged));
report(merged);
