import { MAX_BULK_WRITE } from '../../engine/model/limits.js';
import { createReadStream, createWriteStream, existsSync, statSync, type ReadStream, type WriteStream } from 'node:fs';
import { resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { CliError } from '../errors.js';
import { importRows, type ImportResult, type ImportSettings } from '../records/importer.js';
import { formatOf, readRows, rowValues } from '../records/read.js';
import { StoredCheck } from '../records/stored-check.js';
import type { RowError } from '../records/shape.js';
import { whileThrottled } from '../records/throttle.js';
import { gapsOf, linesText } from '../records/written.js';
import { grouped } from '../render/numbers.js';
import { rowProgress, type ProgressBar } from '../render/progress.js';
import { clientOf, shapeOf, type RecordsContext } from '../records/context.js';

/** Refused rows printed on stderr before the rest are only counted (all go to --errors). */
const SHOWN_REFUSALS = 20;

/**
 * Batches sent and not yet answered (importer.ts). Two keep the server busy: it writes one
 * while the next waits in its socket, and the CLI prepares the one after. Measured on
 * 100,000 rows (docs/records.md "Performance"; a shared machine, load 5–7), best wall time
 * with 1 / 2 / 3 in three sets: 3.05 / 2.52 / 2.73 s, 3.64 / 2.96 / 2.99 s, 4.14 / 4.22 /
 * 4.40 s. A third batch adds memory (each is held until answered), not speed: the server
 * writes one batch at a time.
 */
const IN_FLIGHT = 2;

/**
 * `schemasync records import <object> <file|->` (contract.md §4, issue 17): prepare (the
 * object's schema, the file, the options) → run (importer.ts) → render (a summary on stdout,
 * refused rows and notices on stderr, the bar on a terminal's stderr). Exit 0 when every row
 * was imported (or, with --dry-run, would be); 1 when any row was refused.
 */
export async function importRecords(ctx: RecordsContext, object: string, file: string): Promise<number> {
  const o = ctx.options;
  const format = formatOf(o.format, file);
  const batchSize = o.batch === undefined ? 1000 : Number(o.batch);
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > MAX_BULK_WRITE) throw new CliError(`--batch must be a whole number from 1 to ${MAX_BULK_WRITE}, got '${o.batch ?? ''}'`);
  const onError = o.onError ?? 'stop';
  if (onError !== 'stop' && onError !== 'skip') throw new CliError(`--on-error must be stop or skip, got '${onError}'`);
  const path = file === '-' ? undefined : resolve(ctx.cwd, file);
  if (path !== undefined && (!existsSync(path) || !statSync(path).isFile())) throw new CliError(`No such file: ${file}`);

  const client = clientOf(ctx);
  const shape = await shapeOf(client, object);
  const input: Readable = path === undefined ? process.stdin : createReadStream(path, { highWaterMark: 64 * 1024 });
  const errorsOut: WriteStream | undefined = o.errors !== undefined ? createWriteStream(resolve(ctx.cwd, o.errors)) : undefined;
  const tty = Boolean((ctx.stderr as { isTTY?: boolean }).isTTY) && o.progress !== false;
  const bar: ProgressBar = tty
    ? rowProgress(ctx.stderr, { label: object, totalBytes: path === undefined ? undefined : statSync(path).size, bytesRead: () => (input as ReadStream).bytesRead ?? 0 })
    : { update() {}, done() {} };
  // A line on stderr clears the bar first; the next update draws it again.
  const say = (text: string) => ctx.stderr.write(`${tty ? '\r\u001b[K' : ''}${text}\n`);
  const notes = { ignored: new Set<string>() };
  let shownRefusals = 0;
  const settings: ImportSettings = { object, batchSize, dryRun: o.dryRun === true, onError, inFlight: IN_FLIGHT };
  const stored = new StoredCheck(client, shape, say);
  const started = Date.now();
  let result: ImportResult | undefined;
  try {
    result = await importRows(
      readRows(input, format, shape, notes),
      shape,
      settings.dryRun
        ? undefined
        : (rows, idempotencyKey, label) =>
            whileThrottled(
              () => client.records(object).bulkCreateUnanswered(rows.map((r) => r.json ?? rowValues(r)), { idempotencyKey }),
              (secs) => say(`rate limit reached (429 Too Many Requests; bulk writes: 10 a minute on the hosted service): waiting ${secs} s, then sending ${label} again`),
            ),
      settings,
      {
        refused: (line, errors, values) => {
          errorsOut?.write(`${JSON.stringify({ line, errors, values })}\n`);
          if (shownRefusals++ < SHOWN_REFUSALS) say(refusalLine(line, errors));
        },
        notice: say,
        progress: (rows) => bar.update(rows),
      },
      settings.dryRun ? (records) => stored.check(records) : undefined,
    );
  } catch (err) {
    bar.done();
    // Only a dry run's check ends here (importer.ts): nothing was written.
    if (!(err instanceof CliError)) say(`the import stopped: nothing was written; rerun the same command`);
    throw err;
  } finally {
    bar.done();
    if (path !== undefined) (input as ReadStream).destroy();
    await new Promise<void>((r) => (errorsOut ? errorsOut.end(r) : r()));
  }
  if (result.failure !== undefined) {
    // A failure that is not about rows (403, the server went away …): say exactly which lines
    // are in the store, so a rerun is understood to continue, not to duplicate.
    // A file that could not be read further (a malformed CSV) is fixed first; fixing it in
    // place keeps every batch's key, so the batches already written are replayed.
    const next = result.failedReading ? 'Fix the file in place (add or remove no line) and rerun the same command' : 'Rerun the same command to continue';
    say(`the import stopped: ${whereItStopped(result)} ${next}: batches already written are replayed, not written again.`);
    throw result.failure;
  }
  if (notes.ignored.size > 0) say(`note: ${[...notes.ignored].join(', ')}: system attributes; the service assigns them, so the file's values were ignored`);
  if (shownRefusals > SHOWN_REFUSALS) say(`… and ${shownRefusals - SHOWN_REFUSALS} more refused rows${o.errors ? ` (all in ${o.errors})` : ' (pass --errors rejected.ndjson to keep them all)'}`);
  render(ctx, object, file, result, settings, (Date.now() - started) / 1000);
  return result.refused > 0 ? 1 : 0;
}

/**
 * `lines 1–2000 and 3001–4000 are imported; lines 2001–3000 and 4001–4500 are not, nor is
 * anything after line 4500.` With batches in flight together, a batch after the refused one
 * may be written (importer.ts), so the answer is a list of ranges, not a line to resume at.
 */
function whereItStopped(r: ImportResult): string {
  // Nothing written and nothing in doubt: which lines are not imported would be every line read.
  if (r.written.length === 0 && r.unsure.length === 0) return 'nothing was imported.';
  const parts: string[] = [r.written.length === 0 ? 'nothing was imported' : `${linesText(r.written)} ${r.written.length === 1 && r.written[0]!.from === r.written[0]!.to ? 'is' : 'are'} imported`];
  if (r.unsure.length > 0) parts.push(`${linesText(r.unsure)} may be (sent, but the answer never came)`);
  const gaps = gapsOf([...r.written, ...r.unsure].sort((a, b) => a.from - b.from), r.lastLineRead, r.firstLineRead || 1);
  const after = `anything after line ${r.lastLineRead}`;
  parts.push(gaps.length === 0 ? `${after} is not` : `${linesText(gaps)} ${gaps.length === 1 && gaps[0]!.from === gaps[0]!.to ? 'is' : 'are'} not, nor is ${after}`);
  return `${parts.join('; ')}.`;
}

/** `line 7, column 3: amount must be a number (got "abc")` — one line per refused row. */
function refusalLine(line: number, errors: readonly RowError[]): string {
  const only = errors.length === 1 ? errors[0]! : undefined;
  if (only?.column !== undefined) return `line ${line}, column ${only.column}: ${only.message}`;
  return `line ${line}: ${errors.map((e) => (e.column !== undefined ? `column ${e.column}: ${e.message}` : e.message)).join('; ')}`;
}

function render(ctx: RecordsContext, object: string, file: string, r: ImportResult, s: ImportSettings, seconds: number): void {
  const source = file === '-' ? 'stdin' : file;
  const rate = Math.round(r.rows / Math.max(seconds, 0.001));
  if (ctx.global.json) {
    const doc = { object, file: source, dryRun: s.dryRun, rows: r.rows, imported: r.imported, alreadyImported: r.alreadyImported, refused: r.refused, batches: r.batches, stopped: r.stopped, lastImportedLine: r.lastImportedLine ?? null, written: r.written.map((x) => [x.from, x.to]), seconds, rowsPerSecond: rate };
    ctx.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
    return;
  }
  const n = grouped;
  const lines: string[] = [];
  if (s.dryRun) {
    lines.push(`dry run: ${n(r.rows - r.refused)} of ${n(r.rows)} rows of ${source} would be imported into ${object}; ${n(r.refused)} refused. Nothing was written.`);
    lines.push('  checked: types and constraints, required, unknown attributes, unique values (within the file and against stored records), relation ids exist; not checked without writing: document ids.');
  } else {
    const again = r.alreadyImported > 0 ? `; ${n(r.alreadyImported)} already imported by an earlier run (not written again)` : '';
    lines.push(`imported ${n(r.imported)} of ${n(r.rows)} rows of ${source} into ${object} in ${seconds.toFixed(1)} s (${n(rate)} rows/s, ${n(r.batches)} ${r.batches === 1 ? 'batch' : 'batches'})${again}; ${n(r.refused)} refused.`);
    if (r.stopped) {
      lines.push(`stopped at the first refused row (--on-error stop): ${whereItStopped(r)} Fix the refused rows in place (add or remove no line) and rerun: batches already written are replayed, not written again. Or pass --on-error skip.`);
    }
  }
  ctx.stdout.write(`${lines.join('\n')}\n`);
}
