// Single-record create over HTTP, many connections (issue 3 "Performance"):
//   schemasync's server  vs  a bare Fastify + better-sqlite3 handler doing the same insert
//   (target ≥ 0.6 of it)  vs  json-server 0.17 (target ≥ 3×). Same run, same machine.
// Each server runs in its own child process; autocannon drives it from this one
// (compare/http-create.mjs, shared with baseline.bench.mjs's `create-vs-bare` case).
import { checkTarget } from './target.mjs';
import { CONNECTIONS, measureCreate } from './compare/http-create.mjs';

const DURATION = Number(process.env.BENCH_SECONDS ?? 8);

async function measure(kind) {
  const r = await measureCreate(kind, { seconds: DURATION });
  console.log(
    `${kind.padEnd(12)} ${r.rps.toFixed(0).padStart(7)} creates/s  ${(r.cpuPerCreate * 1000).toFixed(0).padStart(4)} µs server CPU/create  p50 ${r.p50} ms  p99 ${r.p99} ms  non-2xx ${r.non2xx}  errors ${r.errors}`,
  );
  return r.rps;
}

console.log(`single-record create, ${CONNECTIONS} connections, ${DURATION} s each`);
// BENCH_ONLY=bare,json-server measures a subset (checking the harness without the store).
const only = process.env.BENCH_ONLY?.split(',');
const run = async (k) => (!only || only.includes(k) ? measure(k) : NaN);
const ours = await run('ours');
const bare = await run('bare');
const js = await run('json-server');
const vsBare = ours / bare;
const vsJs = ours / js;
console.log(`ratio schemasync / bare fastify+sqlite: ${vsBare.toFixed(2)}  (target ≥ 0.60)`);
console.log(`ratio schemasync / json-server 0.17:   ${vsJs.toFixed(2)}×  (target ≥ 3×)`);
if (!only || (only.includes('ours') && only.includes('bare'))) checkTarget('creates/s vs bare Fastify + better-sqlite3', vsBare >= 0.6, `${vsBare.toFixed(2)} (≥ 0.60)`);
if (!only || (only.includes('ours') && only.includes('json-server'))) checkTarget('creates/s vs json-server', vsJs >= 3, `${vsJs.toFixed(2)}× (≥ 3×)`);
