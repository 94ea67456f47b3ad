import { ServiceError, type FieldError } from '../errors.js';
import type { AttributeSpec } from '../model/attribute.js';
import { checkFilter, checkSort, SYSTEM_FILTER_FIELDS, type Filter, type Scalar, type SortSpec } from '../model/filter.js';
import { sqlIdent } from '../model/names.js';
import type { StoredObject } from '../model/stored.js';
import { typeDef } from '../model/types/registry.js';
import type { SqlValue } from '../model/types/type-def.js';
import { isMultiValued, tableIdent } from './catalog.js';
import type { SearchInput, SearchPage } from './types.js';

/**
 * Record search (contract.md §3): the filter grammar checked by engine/model/filter.ts,
 * compiled to SQL with bound parameters only (identifiers come from checked names), sorted
 * on the given keys in their order then id (unless the keys name it), paged by a keyset cursor so concurrent inserts never shift a
 * page: the cursor holds the last row's sort values and id, and the next page starts
 * strictly after that tuple.
 */
export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 500;
/** Searches binding more filter values than this are not kept in the statement cache. */
const CACHED_PARAMS = 64;

interface Host {
  stmt(sql: string, options?: { cache?: boolean }): { all(...params: unknown[]): unknown[]; get(...params: unknown[]): unknown };
  toRecord(o: StoredObject, row: never): SearchPage['records'][number];
}

interface Field {
  sql: string;
  spec: AttributeSpec | undefined;
}

function fieldsOf(o: StoredObject): Map<string, Field> {
  const m = new Map<string, Field>();
  for (const f of SYSTEM_FILTER_FIELDS) m.set(f, { sql: sqlIdent(f), spec: undefined });
  for (const a of o.attributes) if (!a.system) m.set(a.name, { sql: sqlIdent(a.name), spec: a });
  return m;
}

/** A filter value as the column holds it (booleans as 0/1, datetimes normalised…). */
function bindValue(field: Field, v: Scalar): SqlValue {
  if (v === null) return null;
  if (typeof v === 'boolean') return v ? 1 : 0;
  const spec = field.spec;
  if (!spec || isMultiValued(spec)) return v;
  const loose: AttributeSpec = { name: spec.name, type: spec.type, ...(spec.options ? { options: spec.options } : {}) };
  const parsed = typeDef(spec.type).parse(v, loose);
  if (!parsed.ok || parsed.value === null) return v;
  return typeDef(spec.type).toColumn(parsed.value, loose);
}

class Compiler {
  params: SqlValue[] = [];
  constructor(private readonly fields: Map<string, Field>) {}

  filter(f: Filter): string {
    const parts: string[] = [];
    for (const key of Object.keys(f)) {
      const value = f[key];
      if (key === 'and' || key === 'or') {
        const subs = (value as Filter[]).map((s) => `(${this.filter(s)})`);
        parts.push(`(${subs.join(key === 'and' ? ' AND ' : ' OR ')})`);
      } else if (key === 'not') {
        // Complement, including records whose attribute is null (SQL NULL would drop them).
        parts.push(`NOT IFNULL((${this.filter(value as Filter)}), 0)`);
      } else {
        parts.push(this.condition(this.fields.get(key)!, value as Scalar | Record<string, unknown>));
      }
    }
    return parts.length === 0 ? '1' : parts.join(' AND ');
  }

  private bind(field: Field, v: Scalar): string {
    this.params.push(bindValue(field, v));
    return '?';
  }

  private condition(field: Field, cond: Scalar | Record<string, unknown>): string {
    if (cond === null || typeof cond !== 'object') return this.op(field, 'eq', cond);
    return Object.entries(cond)
      .map(([op, v]) => this.op(field, op, v))
      .join(' AND ');
  }

  private op(field: Field, op: string, v: unknown): string {
    const c = field.sql;
    const multi = field.spec !== undefined && isMultiValued(field.spec);
    // Multi-valued attributes (JSON lists) match when one element matches (contract §3 contains).
    const member = (x: Scalar): string => `EXISTS (SELECT 1 FROM json_each(${c}) WHERE value = ${this.bindRaw(x)})`;
    switch (op) {
      case 'eq':
        if (v === null) return `${c} IS NULL`;
        return multi ? member(v as Scalar) : `${c} = ${this.bind(field, v as Scalar)}`;
      case 'ne':
        if (v === null) return `${c} IS NOT NULL`;
        return multi ? `NOT ${member(v as Scalar)}` : `${c} IS NOT ${this.bind(field, v as Scalar)}`;
      case 'gt':
      case 'gte':
      case 'lt':
      case 'lte': {
        const sym = { gt: '>', gte: '>=', lt: '<', lte: '<=' }[op];
        return `${c} ${sym} ${this.bind(field, v as Scalar)}`;
      }
      case 'in':
      case 'nin': {
        // null in the list means "is null", as eq null does; nin is then exactly the
        // records in leaves out, so a null value is kept unless the list names null (as ne).
        const all = v as Scalar[];
        const list = all.filter((x) => x !== null);
        const orNull = list.length < all.length;
        // One IN list either way: an OR of n EXISTS would nest n deep, past SQLite's
        // expression depth of 1000 (engine/model/filter.ts caps lists at 1000 values).
        const anyOf =
          list.length === 0
            ? '0'
            : multi
              ? `EXISTS (SELECT 1 FROM json_each(${c}) WHERE value IN (${list.map((x) => this.bindRaw(x)).join(', ')}))`
              : `${c} IN (${list.map((x) => this.bind(field, x)).join(', ')})`;
        if (op === 'in') return orNull ? `(${anyOf} OR ${c} IS NULL)` : anyOf;
        return orNull ? `(${c} IS NOT NULL AND NOT ${anyOf})` : `(${c} IS NULL OR NOT ${anyOf})`;
      }
      case 'contains':
        if (multi) return member(v as string);
        return `instr(lower(${c}), lower(${this.bindRaw(v as string)})) > 0`;
      case 'startsWith':
        return `substr(${c}, 1, length(${this.bindRaw(v as string)})) = ${this.bindRaw(v as string)}`;
      case 'isNull':
        return v ? `${c} IS NULL` : `${c} IS NOT NULL`;
      default:
        throw new Error(`unchecked filter operator ${op}`);
    }
  }

  private bindRaw(v: Scalar): string {
    this.params.push(typeof v === 'boolean' ? (v ? 1 : 0) : v);
    return '?';
  }
}

function badRequest(errors: FieldError[]): ServiceError {
  return new ServiceError('SCHEMA_VALIDATION_FAILED', 'Validation failed', { errors });
}

/** A cursor is the last row's value of each sort key, id included. */
function decodeCursor(cursor: string, keys: number): SqlValue[] {
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(v) && v.length === keys && v.every((x) => x === null || typeof x === 'string' || typeof x === 'number')) {
      return v as SqlValue[];
    }
  } catch {
    // fall through
  }
  throw badRequest([{ path: ['cursor'], message: 'is not a cursor from this search (send the same filter and sort as the page it came from)' }]);
}

export function searchRecords(host: Host, o: StoredObject, input: SearchInput): SearchPage {
  const fields = fieldsOf(o);
  const known = (n: string): boolean => fields.has(n);
  const errors: FieldError[] = [];
  if (input.filter !== undefined) errors.push(...checkFilter(input.filter, known));
  if (input.sort !== undefined) errors.push(...checkSort(input.sort, known));
  const limit = input.limit ?? DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) errors.push({ path: ['limit'], message: `must be an integer from 1 to ${MAX_LIMIT}` });
  if (errors.length > 0) throw badRequest(errors);

  // The sort in the order given, then id (unique) so every order is total and a cursor names
  // one position. A list that names id already ends there: keys after it never decide.
  const given: SortSpec[] = input.sort ?? [];
  const idAt = given.findIndex((s) => s.attribute === 'id');
  const sort = idAt === -1 ? [...given, { attribute: 'id' }] : given.slice(0, idAt + 1);
  const keys = sort.map((s) => ({ name: s.attribute, sql: fields.get(s.attribute)!.sql, desc: s.direction === 'desc' }));

  const compiler = new Compiler(fields);
  const where = input.filter ? compiler.filter(input.filter) : '1';
  const filterParams = [...compiler.params];
  const table = tableIdent(o.name);

  let after = '';
  const afterParams: SqlValue[] = [];
  if (input.cursor !== undefined) {
    const last = decodeCursor(input.cursor, keys.length);
    // (k1, k2, …, id) strictly after the cursor in this order. SQLite puts NULLs first
    // ascending and last descending; each comparison honours that.
    const ors: string[] = [];
    keys.forEach((k, i) => {
      const eqs: string[] = [];
      for (let j = 0; j < i; j++) {
        eqs.push(`${keys[j]!.sql} IS ?`);
        afterParams.push(last[j] ?? null);
      }
      const v = last[i] ?? null;
      let cmp: string;
      if (!k.desc) cmp = v === null ? `${k.sql} IS NOT NULL` : `${k.sql} > ?`;
      else cmp = v === null ? '0' : `(${k.sql} < ? OR ${k.sql} IS NULL)`;
      if (v !== null) afterParams.push(v);
      ors.push(`(${[...eqs, cmp].join(' AND ')})`);
    });
    after = ` AND (${ors.join(' OR ')})`;
  }
  // A filter with long lists is rarely sent twice in the same shape, and its prepared
  // statement is large: prepared for this call only, so the cache holds the common shapes.
  const cache = { cache: filterParams.length <= CACHED_PARAMS };
  const order = keys.map((k) => `${k.sql} ${k.desc ? 'DESC' : 'ASC'}`).join(', ');
  const rows = host.stmt(`SELECT * FROM ${table} WHERE (${where})${after} ORDER BY ${order} LIMIT ?`, cache).all(...filterParams, ...afterParams, limit + 1) as Record<
    string,
    SqlValue
  >[];
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  const lastRow = page.at(-1);
  const nextCursor =
    more && lastRow
      ? Buffer.from(JSON.stringify(keys.map((k) => lastRow[k.name] ?? null))).toString('base64url')
      : null;
  const total = (host.stmt(`SELECT COUNT(*) AS n FROM ${table} WHERE (${where})`, cache).get(...filterParams) as { n: number }).n;
  return { records: page.map((r) => host.toRecord(o, r as never)), nextCursor, total };
}
