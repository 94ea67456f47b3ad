import { createHash } from 'node:crypto';
import { rowValues, type SourceRow } from './read.js';
import { LineLedger, type LineRange } from './written.js';
import type { RecordShape, RowError } from './shape.js';

/**
 * The import loop of `schemasync records import` (contract.md §4, issue 17): rows in file
 * order → bulk-create batches → one request each, with up to `inFlight` requests sent and
 * not yet answered, so the server writes batch k while this process reads, checks and
 * serialises batch k+1 (one at a time, the two never overlapped: the CLI idled half the
 * import waiting for answers, and the server idled while the CLI prepared the next batch).
 *
 * Batches. Batch k holds the rows whose place in the file (`seq`, blank lines not counted)
 * is in [k·batchSize, (k+1)·batchSize) and that the CLI did not refuse. Its boundaries are
 * places in the file, not counts of rows sent, so fixing a refused row in place changes
 * that one batch and no boundary after it.
 *
 * Rerun safety. Each batch carries an idempotency key derived from the object, `batchSize`,
 * k and the batch's rows as the file has them — nothing of any other batch. With batches
 * in flight together, a batch after a refused (or failed) one can be written while the
 * refused one is not; a rerun of the fixed file must replay that later batch, which a key
 * chained over the earlier batches' rows would not (the fixed row would change it). So a
 * rerun of the same file (or of the file with rows fixed in place) after a crash, Ctrl-C or
 * a refusal sends the same keys with the same bodies for every unchanged batch, and the
 * server replays the ones it already wrote instead of writing them again (contract.md §3,
 * 24 hours). Two batches with equal rows at different places have different keys (k).
 *
 * Refusals. Rows the registry's rules refuse never leave the CLI. A batch the server
 * refuses (a relation or document id that does not exist, a unique value already stored)
 * answers SCHEMA_VALIDATION_FAILED naming each item, and nothing of it was written (bulk
 * writes are all or nothing). With `stop` nothing more is sent; the batches already in
 * flight settle (they may be written: each is its own all-or-nothing write) and the result
 * says exactly which lines are in the store (LineLedger). With `skip` those rows are
 * reported and the rest of the batch is sent again under a key derived from the batch's key
 * and the round. On a rerun the first attempt is refused again the same way and the second
 * one is replayed; if the refusals differ (the reduced batch differs), the server answers
 * 409 for that key and the batch is reported as imported by the earlier run rather than
 * written a second time.
 *
 * Concurrency: the batches of one import are independent writes (disjoint rows, distinct
 * keys), so any order in which the server commits them leaves the same rows stored; what
 * depends on order — a `unique` value repeated in two batches in flight, a relation to a
 * row of a later batch — is judged by the server per batch, as for any two clients, and a
 * refusal is reported by line like any other. Other clients writing the same object at the
 * same time are judged the same way.
 */
export interface ImportSettings {
  object: string;
  batchSize: number;
  dryRun: boolean;
  onError: 'stop' | 'skip';
  /** Batches sent and not yet answered, at most (1 sends one at a time). */
  inFlight: number;
}

export interface ImportEvents {
  /** A row that was not (or would not be) imported, with every reason known. */
  refused(line: number, errors: readonly RowError[], values: Record<string, unknown>): void;
  notice(text: string): void;
  progress(rowsRead: number): void;
}

/** Dry run: the rows of a batch (by index) the stored data would refuse (stored-check.ts). */
export type BatchChecker = (records: Record<string, unknown>[]) => Promise<Map<number, RowError[]>>;

/** Sends one batch (waiting out 429s); says whether the server replayed an earlier answer. */
export type BatchSender = (rows: readonly SourceRow[], idempotencyKey: string, label: string) => Promise<{ replayed: boolean }>;

export interface ImportResult {
  rows: number;
  imported: number;
  /** Rows of batches an earlier run had written: replayed, not written again. */
  alreadyImported: number;
  refused: number;
  batches: number;
  /** `--on-error stop` ended the import at a refused row. */
  stopped: boolean;
  /** The last line of the file whose row is in the store (written or replayed). */
  lastImportedLine: number | undefined;
  /** The lines whose rows are in the store, in file order (this run's writes and replays). */
  written: LineRange[];
  /** Lines of batches sent whose answer never came (the connection failed): maybe written. */
  unsure: LineRange[];
  /** The line of the first row read (2 in a CSV, after its header); 0 when none was read. */
  firstLineRead: number;
  /** The last line read; rows after it were not read, so not sent. */
  lastLineRead: number;
  /** What ended the import early that is not about rows (403, the server went away …). */
  failure?: unknown;
  /** The failure is the file's (a malformed CSV, a read error): rows after `lastLineRead` could not be read. */
  failedReading?: boolean;
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

export async function importRows(
  rows: AsyncIterable<readonly SourceRow[]>,
  shape: RecordShape,
  send: BatchSender | undefined,
  settings: ImportSettings,
  events: ImportEvents,
  check?: BatchChecker,
): Promise<ImportResult> {
  const result: ImportResult = { rows: 0, imported: 0, alreadyImported: 0, refused: 0, batches: 0, stopped: false, lastImportedLine: undefined, written: [], unsure: [], firstLineRead: 0, lastLineRead: 0 };
  const written = new LineLedger();
  const unsure = new LineLedger();
  const seed = `schemasync records import v2\u0000${settings.object}\u0000${settings.batchSize}`;
  // The first failure by batch, so the error reported is the earliest one in the file.
  let failure: { batch: number; err: unknown } | undefined;
  const inflight = new Set<Promise<void>>();
  let batch: SourceRow[] = [];
  const duplicates = settings.dryRun ? new UniqueInFile(shape) : undefined;
  // Nothing more is sent once a row stopped the import or a batch failed.
  const halted = () => result.stopped || failure !== undefined;

  const refuse = (row: SourceRow, errors: readonly RowError[]) => {
    result.refused++;
    events.refused(row.line, errors, rowValues(row));
    // A dry run reports every row (issue 17: "checks every row"), whatever --on-error says.
    if (settings.onError === 'stop' && !settings.dryRun) result.stopped = true;
  };

  const stored = (items: readonly SourceRow[], replayed: boolean) => {
    if (replayed) result.alreadyImported += items.length;
    else result.imported += items.length;
    written.add(items);
  };

  const flush = async (items: SourceRow[]): Promise<void> => {
    const n = ++result.batches;
    // The rows as the file has them, one per line: no row's text holds a line break (NDJSON
    // rows are split at them; a CSV row's text is its cells as JSON), so the text is the list.
    // One hash update per batch, not two per row.
    const base = sha256(`${seed}\u0000${Math.floor(items[0]!.seq / settings.batchSize)}\u0000${items.map((r) => r.text).join('\n')}`);
    let key = `import-${base.slice(0, 48)}`;
    let pending = items;
    for (let round = 0; pending.length > 0; round++) {
      const label = `batch ${n} (lines ${pending[0]!.line}–${pending[pending.length - 1]!.line})`;
      try {
        const answer = await send!(pending, key, label);
        if (answer.replayed) events.notice(`${label} was imported by an earlier run; not written again`);
        stored(pending, answer.replayed);
        return;
      } catch (err) {
        if (isKeyReused(err)) {
          events.notice(`${label} was imported by an earlier run that refused other rows; not written again`);
          stored(pending, true);
          return;
        }
        const named = refusedItems(err, pending.length);
        if (!named) {
          // Sent, and no answer: it may have been written (a rerun replays it if so).
          if (answerLost(err)) unsure.add(pending);
          if (failure === undefined || n < failure.batch) failure = { batch: n, err };
          return;
        }
        for (const [i, errors] of named) refuse(pending[i]!, errors);
        if (result.stopped) return;
        pending = pending.filter((_r, i) => !named.has(i));
        key = `import-${sha256(`${base}\u0000skip\u0000${round + 1}`).slice(0, 48)}`;
      }
    }
  };

  // At most `inFlight` unanswered batches: the reading waits (and so does the file, through
  // the async iterator's backpressure) until one settles. flush never rejects.
  const launch = async (items: SourceRow[]): Promise<void> => {
    while (inflight.size >= settings.inFlight) await Promise.race(inflight);
    if (halted()) return;
    const p: Promise<void> = flush(items).finally(() => inflight.delete(p));
    inflight.add(p);
  };

  // Dry run: rows the file alone lets through are checked against the stored data a batch at
  // a time, and the refused ones reported in line order within the batch.
  const checkBatch = async (items: SourceRow[]): Promise<void> => {
    const named = await check!(items.map(rowValues));
    for (const i of [...named.keys()].sort((a, b) => a - b)) refuse(items[i]!, named.get(i)!);
  };

  try {
    reading: for await (const run of rows) {
      for (const row of run) {
        if (halted()) break reading;
        if (result.rows++ === 0) result.firstLineRead = row.line;
        result.lastLineRead = row.line;
        if ((result.rows & 255) === 0) events.progress(result.rows);
        const errors = row.errors.length > 0 ? row.errors : (duplicates?.check(rowValues(row)) ?? []);
        if (errors.length > 0) {
          refuse(row, errors);
          if (result.stopped) break reading;
        } else if (!settings.dryRun) {
          if (row.json !== undefined) row.values = undefined;
          batch.push(row);
        } else if (check) {
          batch.push(row);
        }
        // The batch ends at a place in the file, whatever was refused before it.
        if ((row.seq + 1) % settings.batchSize === 0 && batch.length > 0) {
          const full = batch;
          batch = [];
          if (settings.dryRun) await checkBatch(full);
          else await launch(full);
        }
      }
    }
    if (batch.length > 0 && !halted()) {
      if (settings.dryRun) await checkBatch(batch);
      else await launch(batch);
    }
  } catch (err) {
    // A dry run sends nothing that could be in flight: its failures (a check the server could
    // not answer) end it as they are.
    if (settings.dryRun) throw err;
    // Otherwise only the reading throws here (flush never rejects): the file cannot be read
    // further (a malformed CSV row, a read error). Batches already sent still settle below,
    // so the result says which lines are in the store.
    if (failure === undefined) failure = { batch: result.batches + 1, err };
    result.failedReading = failure.err === err;
  }
  await Promise.all(inflight);
  events.progress(result.rows);
  result.written = written.ranges();
  result.unsure = unsure.ranges();
  result.lastImportedLine = result.written[result.written.length - 1]?.to;
  if (failure !== undefined) result.failure = failure.err;
  return result;
}

/** A failure after the request left: no answer (status 0) or a 5xx — the write may have happened. */
function answerLost(err: unknown): boolean {
  const status = (err as { status?: unknown } | null)?.status;
  return typeof status !== 'number' || status === 0 || status >= 500;
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
