// A minimal server for records-import.bench.mjs's floor: the least a server can do for
// `records import` and still do what issue 17 asks of the write, so the bench can print how far
// the real server is from it. Started as a child process:
//   node minimal-import-server.mjs <upstream origin> <database file> <none|contract>
// It answers POST /v1/records/:object/bulk-create itself — Fastify's JSON body, one
// better-sqlite3 transaction per batch: the rows into STRICT columns (chunks of 50, time-ordered
// ids, as the store binds them) and their FTS5 entries (the store's tokenizer and prefixes,
// straight from the record table) — and passes every other request to the real server at
// <upstream>, so the real CLI (schema read, key) runs against it unchanged. With `contract` it
// also does what the contract requires of every bulk-create and the store does the same way:
// the body parser with its depth check (json-body.ts), each value checked and converted by
// its attribute (values.ts parseRecordBody), the idempotency fingerprint of the canonical body
// (idempotency.ts) and the key's row read and written in the transaction. Not there in either:
// authentication, roles, the search index's own rows and trigger, relations, documents,
// unique names, rollback of a failed batch's index — it is a floor, not a server.
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import { createHash } from 'node:crypto';
import { newId } from '../../dist/engine/model/ids.js';
import { canonicalJson } from '../../dist/engine/server/idempotency.js';
import { parseJsonBody } from '../../dist/engine/server/json-body.js';
import { parseRecordBody } from '../../dist/engine/store/sql/values.js';
import { CODECS } from '../../dist/engine/store/sqlite/codecs.js';

const [upstream, file, mode] = process.argv.slice(2);
const contract = mode === 'contract';
const CHUNK = 50;

const db = new Database(file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.exec('CREATE TABLE IF NOT EXISTS idem (scope TEXT NOT NULL, key TEXT NOT NULL, body_hash TEXT NOT NULL, status INTEGER NOT NULL, body TEXT NOT NULL, expires_at INTEGER NOT NULL, PRIMARY KEY (scope, key)) STRICT');

/** Per object: its attributes as the real server has them, and the statements of its table. */
const objects = new Map();
async function objectOf(name, authorization) {
  let o = objects.get(name);
  if (o) return o;
  const res = await fetch(`${upstream}/v1/schema/objects/${encodeURIComponent(name)}`, { headers: { authorization } });
  if (!res.ok) throw new Error(`schema of ${name}: ${res.status}`);
  const stored = (await res.json()).data;
  const attrs = stored.attributes.filter((a) => !a.system);
  // The store's own column type per attribute type (engine/store/sqlite/codecs.ts).
  const cols = attrs.map((a) => `"${a.name}" ${CODECS[a.type].column}`);
  const text = attrs.filter((a) => a.type === 'text').map((a) => `"${a.name}"`);
  const table = `"r_${name}"`;
  db.exec(`CREATE TABLE ${table} (id TEXT PRIMARY KEY, version INTEGER NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, created_by TEXT, ${cols.join(', ')}) STRICT`);
  db.exec(`CREATE VIRTUAL TABLE "f_${name}" USING fts5(${text.join(', ')}, content='r_${name}', content_rowid='rowid', tokenize='unicode61 remove_diacritics 2', prefix='2 3 4')`);
  const row = `(?, 1, ?, ?, ?${', ?'.repeat(attrs.length)})`;
  o = {
    stored: { name, attributes: stored.attributes },
    attrs,
    one: db.prepare(`INSERT INTO ${table} VALUES ${row}`),
    chunk: db.prepare(`INSERT INTO ${table} VALUES ${Array(CHUNK).fill(row).join(', ')}`),
    top: db.prepare(`SELECT COALESCE(MAX(rowid), 0) FROM ${table}`).pluck(),
    index: db.prepare(`INSERT INTO "f_${name}"(rowid, ${text.join(', ')}) SELECT rowid, ${text.join(', ')} FROM ${table} WHERE rowid > ?`),
  };
  objects.set(name, o);
  return o;
}

const recall = db.prepare('SELECT status, body FROM idem WHERE scope = ? AND key = ?');
const remember = db.prepare('INSERT INTO idem VALUES (?, ?, ?, ?, ?, ?)');
const ANSWER = (n) => `{"success":true,"data":{"created":${n}}}`;

const app = Fastify({ bodyLimit: 8 * 1024 * 1024 });
if (contract) {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(body));
    } catch (err) {
      done(err, undefined);
    }
  });
}

app.post('/v1/records/:object/bulk-create', async (request, reply) => {
  const o = await objectOf(request.params.object, request.headers.authorization);
  const records = request.body.records;
  const key = contract ? request.headers['idempotency-key'] : undefined;
  const hash = key ? createHash('sha256').update(canonicalJson(request.body)).digest('hex') : '';
  const columns = records.map((body, i) => {
    // Unchecked: each value only encoded for its column, as the store's codec does (a boolean as 0/1).
    if (!contract) return o.attrs.map((a) => (body[a.name] == null ? null : CODECS[a.type].encode(body[a.name], a)));
    const parsed = parseRecordBody(CODECS, o.stored, body, 'create', ['records', i]);
    if (parsed.errors.length > 0) throw new Error(`records[${i}]: ${parsed.errors[0].message}`);
    return parsed.columns.map((c) => c ?? null);
  });
  const now = new Date().toISOString();
  const text = ANSWER(records.length);
  const answered = db.transaction(() => {
    if (key) {
      const prior = recall.get('bench', key);
      if (prior) return { replayed: true, body: prior.body };
    }
    const floor = o.top.get();
    const flat = [];
    let r = 0;
    for (; r + CHUNK <= columns.length; r += CHUNK) {
      flat.length = 0;
      for (let i = r; i < r + CHUNK; i++) flat.push(newId(), now, now, 'bench', ...columns[i]);
      o.chunk.run(flat);
    }
    for (; r < columns.length; r++) o.one.run(newId(), now, now, 'bench', ...columns[r]);
    o.index.run(floor);
    if (key) remember.run('bench', key, hash, 201, text, Date.now() + 86_400_000);
    return { replayed: false, body: text };
  })();
  reply.code(201).type('application/json; charset=utf-8');
  reply.header(answered.replayed ? 'idempotent-replayed' : 'preference-applied', answered.replayed ? 'true' : 'return=minimal');
  return answered.body;
});

app.all('/*', async (request, reply) => {
  const headers = Object.fromEntries(Object.entries(request.headers).filter(([k]) => !['host', 'content-length', 'connection'].includes(k)));
  const body = request.method === 'GET' || request.method === 'HEAD' || request.body === undefined ? undefined : JSON.stringify(request.body);
  const res = await fetch(`${upstream}${request.url}`, { method: request.method, headers, body });
  reply.code(res.status);
  for (const [k, v] of res.headers) if (!['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'content-encoding'].includes(k)) reply.header(k, v);
  return reply.send(Buffer.from(await res.arrayBuffer()));
});

await app.listen({ host: '127.0.0.1', port: 0 });
console.log(`listening on http://127.0.0.1:${app.server.address().port}/v1`);
