import type { RecordOut, StoredObject } from '../../model/stored.js';
import { holdsDocuments, relationTarget } from '../../model/types/registry.js';
import type { Param } from '../port.js';
import type { Actor } from '../types.js';
import { findObject } from './catalog.js';
import type { Core } from './context.js';
import { tableIdent } from './idents.js';
import { createColumns, createdRecord, prepareCreates } from './records.js';
import { now } from './time.js';
import { userAttributes, type ParsedRow } from './values.js';

/**
 * A single-record create in one statement (issue 15 "Performance"), on a backend that offers
 * Backend.insertIfCatalog (PostgreSQL): where a transaction costs three round trips (BEGIN
 * with the catalog token, the INSERT, COMMIT), a create that needs no read before its write
 * costs one. Which creates: decided from the request and the cached schema, without I/O —
 * - the object is in the process's catalog cache, with the token it was read under
 *   (catalog.ts `cached`): the body is checked against exactly that schema;
 * - the body parses (no value error: the transaction path reports errors together with the
 *   stored rules' findings);
 * - no relation and no document value (null or absent is fine): those rules read other rows
 *   (record-rules.ts, documents.ts) inside the write's transaction.
 * `unique` needs no read: the unique indexes judge the row in the statement. Requests
 * with an idempotency key or inside `Store.transaction` never come here (they need the
 * transaction); the caller sends only top-level single creates.
 *
 * Why the schema used is the schema the row meets (the invariant "a row is stored only if it
 * is valid under the schema in force when it commits", which the transaction path keeps by
 * reading the token inside its SERIALIZABLE transaction): every schema write bumps the token
 * row (catalog.ts `writable`) in its own transaction, and the statement inserts only where
 * that row still holds the token the cache was read under. The backend runs it as a
 * SERIALIZABLE transaction of its own (port.ts insertIfCatalog; postgres/lone-insert.ts says
 * how PostgreSQL makes that exact), so against a push it is ordered as a transaction would be:
 * either it comes first (the push sees its row, and refuses or converts it as it would any
 * stored row), or the push comes first and the statement inserts nothing. Nothing inserted,
 * or a failure of the statement (the table or a column changed under it, a serialization
 * failure, a unique refusal), falls back to the transaction path, which reads the schema
 * again and answers as it always does; only an unreachable database (503) is final here.
 */

/**
 * The record, written in one statement; undefined when the transaction path must do the
 * create (nothing was written). Never refuses a body itself: whatever it would refuse, the
 * transaction path refuses with the schema read in its own snapshot.
 */
export async function loneCreate(core: Core, object: string, body: unknown, actor: Actor): Promise<RecordOut | undefined> {
  const insertIfCatalog = core.backend.insertIfCatalog;
  const cached = insertIfCatalog && core.catalog.cached();
  if (!insertIfCatalog || !cached) return undefined;
  const o = findObject(cached.objects, object);
  if (!o) return undefined;
  let parsed: ParsedRow;
  let id: string;
  try {
    // Throws for an attribute the cached schema does not know (404), which a push may just
    // have added: not this path's to answer.
    const { prepared, errors } = prepareCreates(core, o, [body], false);
    if (errors) return undefined;
    parsed = prepared.parsed[0]!;
    id = prepared.ids[0]!;
  } catch {
    return undefined;
  }
  if (readsBeforeWrite(o, parsed)) return undefined;
  const t = now();
  const row: Param[] = [id, 1, t, t, actor.keyId];
  for (const c of parsed.columns) row.push(c ?? null);
  try {
    if (!(await insertIfCatalog(tableIdent(o.name), createColumns(o), row, cached.token))) return undefined;
  } catch (err) {
    // A unique refusal too goes the transaction way: it names the offenders with the schema
    // of its own snapshot (this statement may have met an index a push had just made).
    if (core.backend.driver.classify(err) === 'unavailable') throw err;
    return undefined;
  }
  return createdRecord(o, id, t, parsed);
}

/** A relation or document value to check against other rows: the transaction path's work. */
function readsBeforeWrite(o: StoredObject, parsed: ParsedRow): boolean {
  for (const a of userAttributes(o)) {
    if (relationTarget(a) === undefined && !holdsDocuments(a)) continue;
    const v = parsed.values[a.name];
    if (v !== null && v !== undefined) return true;
  }
  return false;
}
