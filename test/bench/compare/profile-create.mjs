// Where a single-record create over HTTP spends its time: runs the create-vs-bare load on
// one built checkout's server with the V8 profiler on over the measured window, then prints the server's top
// functions by self and by inclusive time, and self time by module (our files, each
// package, Node internals). Not a benchmark (it measures nothing against a baseline):
// `node test/bench/compare/profile-create.mjs [checkout] [seconds]`; PROFILE_TOP=n rows;
// PROFILE_KIND=bare profiles the bare Fastify route instead.
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { measureCreate } from './http-create.mjs';
import { report } from './profile-report.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const checkout = resolve(process.argv[2] ?? root);
const seconds = Number(process.argv[3] ?? 8);

const kind = process.env.PROFILE_KIND ?? 'ours';
const r = await measureCreate(kind, { seconds, checkout, profile: true });
console.log(`${kind === 'ours' ? checkout : kind}: ${r.rps.toFixed(0)} creates/s under the profiler (slower than unprofiled), ${(r.cpuPerCreate * 1000).toFixed(0)} µs server CPU/create`);
report(r.cpuProfile);
