import { createHash } from 'node:crypto';
import type { SourceRow } from './read.js';
import type { RecordShape, RowError } from './shape.js';

/**
 * The import loop of `schemasync records import` (contract.md §4, issue 17): rows in file
 * order → bulk-create batches of `batchSize` checked rows → one request each, one at a time
 * while the next batch is being read.
 *
 * Rerun safety. Each batch carries an idempotency key derived from the file's content up
 * to and including that batch: key(n) = sha256(key(n-1) + the batch's rows as the file has
 * them), seeded with the object's name. A rerun of the same file after a crash or Ctrl-C therefore sends the same
 * keys with the same bodies, and the server replays the batches it already wrote instead of
 * writing them again (contract.md §3, 24 hours). Rows before a changed line keep their keys;
 * from the first changed batch on, every key is new — those batches were not written.
 *
 * Refusals. Rows the registry's rules refuse never leave the CLI. A batch the server
 * refuses (a relation or document id that does not exist, a unique value already stored)
 * answers SCHEMA_VALIDATION_FAILED naming each item, and nothing of it was written (bulk
 * writes are all or nothing). With `stop` the import ends there; with `skip` those rows
 * are reported and the rest of the batch is sent again under a key derived from the batch's
 * key and the round. On a rerun the first attempt is refused again the same way and the
 * second one is replayed; if the refusals differ (the reduced batch differs), the server
 * answers 409 for that key and the batch is reported as imported by the earlier run rather
 * than written a second time.
 *
 * Concurrency: one batch is in flight at a time, so batches land in file order and a stop
 * leaves a clean prefix of the file imported; other clients writing the same object at the
 * same time are judged by the server per batch (unique values, relation ids), like any write.
 */
export interface ImportSettings {
  object: string;
  batchSize: number;
  dryRun: boolean;
  onError: 'stop' | 'skip';
}

export interface ImportEvents {
  /** A row that was not (or would not be) imported, with every reason known. */
  refused(line: number, errors: RowError[], values: Record<string, unknown>): void;
  notice(text: string): void;
  progress(rowsRead: number): void;
}

/** Dry run: the rows of a batch (by index) the stored data would refuse (stored-check.ts). */
export type BatchChecker = (records: Record<string, unknown>[]) => Promise<Map<number, RowError[]>>;

/** Sends one batch (waiting out 429s); says whether the server replayed an earlier answer. */
export type BatchSender = (records: Record<string, unknown>[], idempotencyKey: string, label: string) => Promise<{ replayed: boolean }>;

export interface ImportResult {
  rows: number;
  imported: number;
  /** Rows of batches an earlier run had written: replayed, not written again. */
  alreadyImported: number;
  refused: number;
  batches: number;
  /** `--on-error stop` ended the import at a refused row. */
  stopped: boolean;
  /** The last line whose batch was written (or replayed), for the "continue from" message. */
  lastImportedLine: number | undefined;
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

export async function importRows(
  rows: AsyncIterable<SourceRow>,
  shape: RecordShape,
  send: BatchSender | undefined,
  settings: ImportSettings,
  events: ImportEvents,
  check?: BatchChecker,
): Promise<ImportResult> {
  const result: ImportResult = { rows: 0, imported: 0, alreadyImported: 0, refused: 0, batches: 0, stopped: false, lastImportedLine: undefined };
  let chain = sha256(`schemasync records import v1\u0000${settings.object}`);
  let fatal: unknown;
  let inflight: Promise<void> = Promise.resolve();
  let batch: SourceRow[] = [];
  const duplicates = settings.dryRun ? new UniqueInFile(shape) : undefined;

  const refuse = (row: SourceRow, errors: RowError[]) => {
    result.refused++;
    events.refused(row.line, errors, row.values);
    // A dry run reports every row (issue 17: "checks every row"), whatever --on-error says.
    if (settings.onError === 'stop' && !settings.dryRun) result.stopped = true;
  };

  const flush = async (items: SourceRow[]): Promise<void> => {
    const n = ++result.batches;
    // The rows as the file has them, hashed without building the batch's text a second time.
    const hash = createHash('sha256').update(chain);
    for (const r of items) hash.update('\u0000').update(r.text);
    chain = hash.digest('hex');
    let key = `import-${chain.slice(0, 48)}`;
    let pending = items;
    for (let round = 0; pending.length > 0; round++) {
      const label = `batch ${n} (lines ${pending[0]!.line}–${pending[pending.length - 1]!.line})`;
      try {
        const answer = await send!(pending.map((r) => r.values), key, label);
        if (answer.replayed) {
          result.alreadyImported += pending.length;
          events.notice(`${label} was imported by an earlier run; not written again`);
        } else {
          result.imported += pending.length;
        }
        result.lastImportedLine = pending[pending.length - 1]!.line;
        return;
      } catch (err) {
        if (isKeyReused(err)) {
          events.notice(`${label} was imported by an earlier run that refused other rows; not written again`);
          result.alreadyImported += pending.length;
          result.lastImportedLine = pending[pending.length - 1]!.line;
          return;
        }
        const named = refusedItems(err, pending.length);
        if (!named) throw err;
        for (const [i, errors] of named) refuse(pending[i]!, errors);
        if (result.stopped) return;
        pending = pending.filter((_r, i) => !named.has(i));
        key = `import-${sha256(`${chain}\u0000skip\u0000${round + 1}`).slice(0, 48)}`;
      }
    }
  };

  // Dry run: rows the file alone lets through are checked against the stored data a batch at
  // a time, and the refused ones reported in line order within the batch.
  const checkBatch = async (items: SourceRow[]): Promise<void> => {
    const named = await check!(items.map((r) => r.values));
    for (const i of [...named.keys()].sort((a, b) => a - b)) refuse(items[i]!, named.get(i)!);
  };

  for await (const row of rows) {
    result.rows++;
    if ((result.rows & 255) === 0) events.progress(result.rows);
    const errors = row.errors.length > 0 ? row.errors : (duplicates?.check(row.values) ?? []);
    if (errors.length > 0) {
      refuse(row, errors);
      if (result.stopped) break;
      continue;
    }
    if (settings.dryRun && !check) continue;
    batch.push(row);
    if (settings.dryRun) {
      if (batch.length >= settings.batchSize) {
        await checkBatch(batch);
        batch = [];
      }
      continue;
    }
    if (batch.length >= settings.batchSize) {
      await inflight;
      if (fatal !== undefined || result.stopped) break;
      inflight = flush(batch).catch((err: unknown) => void (fatal = err));
      batch = [];
    }
  }
  await inflight;
  if (settings.dryRun && batch.length > 0) await checkBatch(batch);
  else if (fatal === undefined && !result.stopped && batch.length > 0) await flush(batch);
  events.progress(result.rows);
  if (fatal !== undefined) throw fatal;
  return result;
}

/**
 * 409 SCHEMA_CONFLICT: the key was used by an earlier run with another body (contract.md §3;
 * bulk-create has no other 409) — a reduced batch whose refusals differ, or the same lines
 * converted differently because the schema changed since. Those lines were imported then.
 */
function isKeyReused(err: unknown): boolean {
  const e = err as { status?: number; code?: string };
  return e?.status === 409 && e.code === 'SCHEMA_CONFLICT';
}

/**
 * The items a bulk refusal names: `errors[].path` = ["records", i, attr] (contract.md §3),
 * or a message starting `records[i]: ` for refusals with their own code. undefined when the
 * refusal is not about items (403, 404 object, an unreachable server): the import fails.
 */
function refusedItems(err: unknown, size: number): Map<number, RowError[]> | undefined {
  const e = err as { status?: number; message?: string; details?: { path?: unknown[]; message?: string }[] };
  if (typeof e?.status !== 'number' || e.status < 400 || e.status >= 500 || e.status === 429) return undefined;
  const out = new Map<number, RowError[]>();
  const add = (i: unknown, error: RowError) => {
    if (typeof i !== 'number' || !Number.isInteger(i) || i < 0 || i >= size) return;
    out.set(i, [...(out.get(i) ?? []), error]);
  };
  for (const d of e.details ?? []) {
    const [root, index, attr] = d.path ?? [];
    if (root === 'records') add(index, { ...(typeof attr === 'string' ? { attribute: attr } : {}), message: d.message ?? e.message ?? 'refused' });
  }
  const m = /^records\[(\d+)\]: (.*)$/s.exec(e.message ?? '');
  if (out.size === 0 && m) add(Number(m[1]), { message: m[2]! });
  return out.size > 0 ? out : undefined;
}

/**
 * Dry run only: a `unique` value repeated within the file, which the import would refuse
 * (the later row's batch). Unique against the records already stored needs the data and is
 * not checked. Holds one string per unique value seen.
 */
class UniqueInFile {
  private readonly seen = new Map<string, Set<string>>();
  constructor(shape: RecordShape) {
    for (const a of shape.attributes) if (a.unique) this.seen.set(a.name, new Set());
  }
  check(values: Record<string, unknown>): RowError[] {
    const errors: RowError[] = [];
    for (const [name, set] of this.seen) {
      const v = values[name];
      if (v === null || v === undefined) continue;
      const k = JSON.stringify(v);
      if (set.has(k)) errors.push({ attribute: name, message: `${name} must be unique: an earlier row of the file has the same value` });
      else set.add(k);
    }
    return errors;
  }
}
