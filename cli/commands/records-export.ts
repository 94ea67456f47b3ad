import { MAX_PAGE } from '../../engine/model/limits.js';
import { stringify } from 'csv-stringify/sync';
import { once } from 'node:events';
import { createWriteStream, existsSync } from 'node:fs';
import { rename, unlink } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { RecordPage } from '../../engine/sdk/index.js';
import { CliError } from '../errors.js';
import { parseFilter } from '../records/query.js';
import { whileThrottled } from '../records/throttle.js';
import { formatOf } from '../records/read.js';
import { grouped } from '../render/numbers.js';
import { clientOf, shapeOf, type RecordsContext } from '../records/context.js';


/**
 * `schemasync records export <object>` (contract.md §4, issue 17): every record (or those
 * `--filter` picks), page by page with the search route's keyset cursor — stable while
 * others insert — written as each page arrives, so memory holds one page. NDJSON lines are
 * `{ "id": …, attr: value, … }`; CSV has a header `id,attr,…` and each cell in the
 * attribute's cell text (engine/model/types/cells.ts): lists and json as JSON, no value as
 * an empty cell, the empty string as `""`. Either imports back unchanged: import ignores
 * `id` (the service assigns ids) and reads every other cell by its attribute's type.
 */
export async function exportRecords(ctx: RecordsContext, object: string): Promise<number> {
  const o = ctx.options;
  const format = o.format !== undefined || o.out !== undefined ? formatOf(o.format, o.out ?? '') : 'ndjson';
  const filter = parseFilter(o.filter);
  const client = clientOf(ctx);
  const shape = await shapeOf(client, object);
  const names = shape.attributes.map((a) => a.name);
  const target = o.out === undefined || o.out === '-' ? undefined : resolve(ctx.cwd, o.out);
  if (target && existsSync(target) && !o.force) throw new CliError(`${o.out} exists; choose another --out or remove it first`);
  // Written beside the target and renamed at the end: an interrupted export leaves no half file.
  const tmp = target ? `${target}.part` : undefined;
  const out = tmp ? createWriteStream(tmp) : ctx.stdout;
  const write = async (text: string) => {
    if (!out.write(text)) await once(out, 'drain');
  };
  const started = Date.now();
  let count = 0;
  try {
    if (format === 'csv') await write(stringify([['id', ...names]]));
    const fetchPage = (cursor: string | undefined): Promise<RecordPage> =>
      whileThrottled(
        () => client.records(object).search({ ...(filter ? { filter } : {}), limit: MAX_PAGE, ...(cursor ? { cursor } : {}) }),
        (secs) => ctx.stderr.write(`rate limit reached (429 Too Many Requests): waiting ${secs} s before reading the next page\n`),
      );
    // One page ahead: the next page is asked for as soon as its cursor is known, so the
    // server reads it while this one is formatted and written. A keyset cursor names a
    // position, not an offset, so asking early changes nothing about which records come; at
    // most two pages are held. When a write fails, the request in flight is left to end on
    // its own; the `catch` keeps its failure, if any, from being an unhandled rejection.
    let next: Promise<RecordPage> | undefined = fetchPage(undefined);
    while (next) {
      const page: RecordPage = await next;
      next = page.nextCursor ? fetchPage(page.nextCursor) : undefined;
      next?.catch(() => undefined);
      if (format === 'csv') {
        const rows = page.records.map((r) => [r.id, ...names.map((n) => shape.toCell(n, r.values[n]))]);
        // quoted_match: an empty string is written `""`, null (no value) as an empty cell.
        if (rows.length > 0) await write(stringify(rows, { quoted_match: /^$/ }));
      } else {
        await write(page.records.map((r) => `${JSON.stringify({ id: r.id, ...r.values })}\n`).join(''));
      }
      count += page.records.length;
    }
    if (tmp) {
      out.end();
      await once(out, 'finish');
      await rename(tmp, target!);
    }
  } catch (err) {
    if (tmp) {
      (out as NodeJS.WritableStream & { destroy(): void }).destroy();
      await unlink(tmp).catch(() => undefined);
    }
    throw err;
  }
  const seconds = (Date.now() - started) / 1000;
  if (target) {
    if (ctx.global.json) ctx.stdout.write(`${JSON.stringify({ object, out: target, format, records: count, seconds })}\n`);
    else ctx.stdout.write(`exported ${grouped(count)} records of ${object} to ${o.out} (${format}) in ${seconds.toFixed(1)} s\n`);
  }
  return 0;
}
