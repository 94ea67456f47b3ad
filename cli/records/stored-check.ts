import { MAX_LIST_VALUES } from '../../engine/model/filter.js';
import { MAX_PAGE } from '../../engine/model/limits.js';
import { isMultiValued, parseValue, relationTarget } from '../../engine/model/types/registry.js';
import type { AttributeSpec } from '../../engine/model/attribute.js';
import type { SchemaClient } from '../../engine/sdk/index.js';
import type { RecordShape, RowError } from './shape.js';

/**
 * `records import --dry-run` against the data already stored (issue 17: "checks every row
 * and writes nothing"): what the server would refuse that the file alone cannot show — a
 * `unique` value a stored record already has, a relation id whose record does not exist.
 * Read-only: one search per attribute and chunk of up to 1,000 distinct values a batch
 * holds (the filter's `in` limit), through the same API the import writes through, so it
 * sees what the key may read. A check the key may not make (no read right on a relation's
 * target) or the server does not offer for a type is skipped and said once, never guessed.
 *
 * It reads a moment of the data: a record written between the dry run and the import can
 * still refuse a row then (the import's own check, on the server, is the one that holds).
 */
export class StoredCheck {
  private readonly skipped = new Set<string>();

  constructor(
    private readonly client: SchemaClient,
    private readonly shape: RecordShape,
    private readonly notice: (text: string) => void,
  ) {}

  /** The rows (by index in `rows`) the stored data would refuse, with every reason. */
  async check(rows: readonly Record<string, unknown>[]): Promise<Map<number, RowError[]>> {
    const refused = new Map<number, RowError[]>();
    const add = (i: number, error: RowError) => refused.set(i, [...(refused.get(i) ?? []), error]);
    for (const spec of this.shape.attributes) {
      if (spec.unique && !isMultiValued(spec)) {
        const stored = await this.existing(this.shape.name, spec, valuesOf(rows, spec.name, false), `unique ${spec.name}`);
        if (stored) {
          rows.forEach((r, i) => {
            const v = r[spec.name];
            if (v !== null && v !== undefined && stored.has(storedKey(spec, v))) add(i, { attribute: spec.name, message: `${spec.name} must be unique: a stored record already has ${JSON.stringify(v)}` });
          });
        }
      }
      const target = relationTarget(spec);
      if (target !== undefined) {
        const ids = valuesOf(rows, spec.name, isMultiValued(spec)).filter((v) => typeof v === 'string');
        const found = await this.existing(target, undefined, ids, `relation ${spec.name} → ${target}`);
        if (found) {
          rows.forEach((r, i) => {
            const v = r[spec.name];
            const missing = (Array.isArray(v) ? v : [v]).filter((id) => typeof id === 'string' && !found.has(storedKey(undefined, id)));
            if (missing.length > 0) add(i, { attribute: spec.name, message: `${spec.name}: no ${target} record ${missing.map((id) => JSON.stringify(id)).join(', ')}` });
          });
        }
      }
    }
    return refused;
  }

  /**
   * The values of `values` that the attribute `spec` (undefined: the record id) of a stored
   * record of `object` has, as `storedKey`s; undefined when the check cannot be made (said
   * once per check).
   */
  private async existing(object: string, spec: AttributeSpec | undefined, values: unknown[], what: string): Promise<Set<string> | undefined> {
    if (this.skipped.has(what) || values.length === 0) return this.skipped.has(what) ? undefined : new Set();
    const attribute = spec?.name ?? 'id';
    const distinct = [...new Map(values.map((v) => [storedKey(spec, v), v])).values()];
    const found = new Set<string>();
    try {
      for (let start = 0; start < distinct.length; start += MAX_LIST_VALUES) {
        const chunk = distinct.slice(start, start + MAX_LIST_VALUES);
        for await (const record of this.client.records(object).iterate({ filter: { [attribute]: { in: chunk } } as never, limit: MAX_PAGE })) {
          found.add(storedKey(spec, spec ? record.values[spec.name] : record.id));
        }
      }
    } catch (err) {
      const e = err as { status?: number; code?: string };
      // 403: the key may not read it; 400: the server has no `in` for this type. Anything
      // else (the server went away) ends the dry run like any other failure.
      if (e?.status !== 403 && e?.status !== 400) throw err;
      this.skipped.add(what);
      this.notice(`dry run: ${what} not checked against stored records (${e.code ?? `HTTP ${e.status}`})`);
      return undefined;
    }
    return found;
  }
}

/** Every non-null value of `name` in the rows (a list's items when `list`). */
function valuesOf(rows: readonly Record<string, unknown>[], name: string, list: boolean): unknown[] {
  const out: unknown[] = [];
  for (const r of rows) {
    const v = r[name];
    if (v === null || v === undefined) continue;
    if (list && Array.isArray(v)) out.push(...v);
    else out.push(v);
  }
  return out;
}

/**
 * A value as the store keeps it (the registry's parseValue: a datetime's one spelling, a
 * number's), so a file's `2024-01-02T10:00:00Z` meets the stored `…00.000Z`; a record id as
 * sent (ids are compared as text).
 */
function storedKey(spec: AttributeSpec | undefined, v: unknown): string {
  if (spec === undefined) return JSON.stringify(v);
  const parsed = parseValue(spec, v);
  return JSON.stringify(parsed.ok ? parsed.value : v);
}
