import type { Core } from './context.js';
import { loadObjects } from './catalog-rows.js';
import { countRecords } from './schema-objects.js';

/**
 * Opening a store (every process, every start): the backend's setup, then the search
 * index, which is built only when missing or of an older layout, and says so (issue 17).
 * One write transaction, so two processes starting on one database do it once.
 */
export async function openCore(core: Core, notice: ((line: string) => void) | undefined): Promise<void> {
  const say = notice ?? ((line: string) => void process.stderr.write(`${line}\n`));
  await core.backend.driver.transaction(async (tx) => {
    await core.backend.setup(tx);
    const objects = [...(await loadObjects(tx)).values()];
    const had = (await tx.get<{ value: string }>("SELECT value FROM _ss_meta WHERE key = 'search_layout'"))?.value;
    // Records are counted only for the notice, so only when the index was built: COUNT(*)
    // reads every table, and this runs on every start of every process.
    if (!(await core.fulltext.ensure(tx, objects))) return;
    let records = 0;
    for (const o of objects) records += await countRecords(tx, o.name);
    const line = indexNotice(had, records, objects.length);
    if (line) say(line);
  });
  core.catalog.forget();
}

/** What opening says once it built the search index; nothing for a new empty store (issue 17). */
export function indexNotice(had: string | undefined, records: number, objects: number): string | undefined {
  if (had === undefined && records === 0) return undefined;
  return `schemasync: search index rebuilt (${had === undefined ? 'missing' : `layout ${had} was older`}): ${records} records in ${objects} objects`;
}
