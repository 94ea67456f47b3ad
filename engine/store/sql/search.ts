import { intColumn } from './rows.js';
import { ServiceError, type FieldError } from '../../errors.js';
import type { AttributeSpec } from '../../model/attribute.js';
import { checkFilter, checkSort, SYSTEM_FILTER_FIELDS, systemFilterSpec, type Filter, type FilterOp, type Scalar, type SortSpec } from '../../model/filter.js';
import { filterOperand, operandSpec } from '../../model/filter-operand.js';
import { DEFAULT_PAGE, MAX_PAGE } from '../../model/limits.js';
import { sqlIdent } from '../../model/names.js';
import type { StoredObject } from '../../model/stored.js';
import type { AttributeType } from '../../model/attribute.js';
import type { Codec, Dialect, Executor, Param } from '../port.js';
import type { SearchInput, SearchPage } from '../types.js';
import { isMultiValued } from './catalog-rows.js';
import type { Core } from './context.js';
import { encodeOperand } from './convert.js';
import { tableIdent } from './idents.js';
import { toRecord } from './records.js';

/**
 * Record search (contract.md §3): the filter grammar checked by engine/model/filter.ts,
 * compiled to SQL with bound parameters only (identifiers come from checked names), sorted
 * on the given keys in their order then id (unless the keys name it), paged by a keyset cursor so concurrent inserts never shift a
 * page: the cursor holds the last row's sort values and id, and the next page starts
 * strictly after that tuple.
 */

interface Field {
  sql: string;
  /** The attribute as operands are parsed against (operandSpec: no write constraints). */
  spec: AttributeSpec;
  multi: boolean;
}

type Path = (string | number)[];

/** Per cached object, as values.ts does (the cache is rebuilt after any schema write, so this never goes stale). */
const fieldCache = new WeakMap<StoredObject, Map<string, Field>>();

function fieldsOf(o: StoredObject): Map<string, Field> {
  let m = fieldCache.get(o);
  if (m) return m;
  m = new Map<string, Field>();
  fieldCache.set(o, m);
  const field = (a: AttributeSpec): Field => ({ sql: sqlIdent(a.name), spec: operandSpec(a), multi: isMultiValued(a) });
  for (const name of SYSTEM_FILTER_FIELDS) m.set(name, field(systemFilterSpec(name)!));
  for (const a of o.attributes) if (!a.system) m.set(a.name, field(a));
  return m;
}

/**
 * Compiles a checked filter to SQL. Each operand is parsed once, here, into the value its
 * column holds (engine/model/filter-operand.ts); a bad one is collected with its path, so
 * one answer names every bad operand.
 */
class Compiler {
  params: Param[] = [];
  errors: FieldError[] = [];
  constructor(
    private readonly fields: Map<string, Field>,
    private readonly sql: Dialect,
    private readonly codecs: Record<AttributeType, Codec>,
  ) {}

  filter(f: Filter, path: Path): string {
    const parts: string[] = [];
    for (const key of Object.keys(f)) {
      const value = f[key];
      if (key === 'and' || key === 'or') {
        const subs = (value as Filter[]).map((s, i) => `(${this.filter(s, [...path, key, i])})`);
        parts.push(`(${subs.join(key === 'and' ? ' AND ' : ' OR ')})`);
      } else if (key === 'not') {
        // Complement, including records whose attribute is null (SQL NULL would drop them).
        parts.push(this.sql.notOrNull(this.filter(value as Filter, [...path, key])));
      } else {
        parts.push(this.condition(this.fields.get(key)!, value as Scalar | Record<string, unknown>, [...path, key]));
      }
    }
    return parts.length === 0 ? 'TRUE' : parts.join(' AND ');
  }

  /** The operand as its column holds it, bound; a bad one is recorded and binds null. */
  private bind(field: Field, op: FilterOp, v: Scalar, path: Path): string {
    const operand = filterOperand(field.spec, op, v);
    if (!operand.ok) this.errors.push({ path, message: operand.message });
    return this.param(operand.ok ? encodeOperand(this.codecs, operand.value, operand.element, field.spec) : null);
  }

  private param(v: Param): string {
    this.params.push(v);
    return this.sql.placeholder(this.params.length);
  }

  private condition(field: Field, cond: Scalar | Record<string, unknown>, path: Path): string {
    if (cond === null || typeof cond !== 'object') return this.op(field, 'eq', cond, path);
    return Object.entries(cond)
      .map(([op, v]) => this.op(field, op as FilterOp, v, [...path, op]))
      .join(' AND ');
  }

  private op(field: Field, op: FilterOp, v: unknown, path: Path): string {
    const c = field.sql;
    const multi = field.multi;
    // Multi-valued attributes (JSON lists) match when one element matches (contract §3 contains).
    const member = (x: Scalar): string => this.sql.listContainsAny(c, [this.bind(field, op, x, path)]);
    switch (op) {
      case 'eq':
        if (v === null) return `${c} IS NULL`;
        return multi ? member(v as Scalar) : `${c} = ${this.bind(field, op, v as Scalar, path)}`;
      case 'ne':
        if (v === null) return `${c} IS NOT NULL`;
        return multi ? `NOT ${member(v as Scalar)}` : this.sql.nullSafeDistinct(c, this.bind(field, op, v as Scalar, path));
      case 'gt':
      case 'gte':
      case 'lt':
      case 'lte': {
        const sym = { gt: '>', gte: '>=', lt: '<', lte: '<=' }[op];
        return `${c} ${sym} ${this.bind(field, op, v as Scalar, path)}`;
      }
      case 'in':
      case 'nin': {
        // null in the list means "is null", as eq null does; nin is then exactly the
        // records in leaves out, so a null value is kept unless the list names null (as ne).
        const all = v as Scalar[];
        const binds: string[] = [];
        all.forEach((x, i) => {
          if (x !== null) binds.push(this.bind(field, op, x, [...path, i]));
        });
        const orNull = binds.length < all.length;
        // One IN list either way: an OR of n EXISTS would nest n deep, past SQLite's
        // expression depth of 1000 (engine/model/filter.ts caps lists at 1000 values).
        const anyOf =
          binds.length === 0
            ? 'FALSE'
            : multi
              ? this.sql.listContainsAny(c, binds)
              : `${c} IN (${binds.join(', ')})`;
        if (op === 'in') return orNull ? `(${anyOf} OR ${c} IS NULL)` : anyOf;
        return orNull ? `(${c} IS NOT NULL AND NOT ${anyOf})` : `(${c} IS NULL OR NOT ${anyOf})`;
      }
      case 'contains':
        if (multi) return member(v as string);
        return this.sql.containsText(c, this.bind(field, op, v as string, path));
      case 'startsWith': {
        const prefix = this.bind(field, op, v as string, path);
        // The same prefix again, for the comparison.
        return this.sql.startsWith(c, prefix, this.param(this.params.at(-1)!));
      }
      case 'isNull':
        return v ? `${c} IS NULL` : `${c} IS NOT NULL`;
      default:
        throw new Error(`unchecked filter operator ${op as string}`);
    }
  }
}

/**
 * A refusal of the search body's content (not its shape, which the route schema checks):
 * SCHEMA_VALIDATION_FAILED with a message that says what, as record validation does.
 */
function badRequest(errors: FieldError[], many: string, named = false): ServiceError {
  const first = errors[0];
  // An operand's message names its attribute already; a shape error's needs its place.
  const one = first && (named ? first.message : `${first.path.join('.')}: ${first.message}`);
  const message = errors.length === 1 && one ? one : `${errors.length} ${many}`;
  return new ServiceError('SCHEMA_VALIDATION_FAILED', message, { errors });
}

/** A cursor is the last row's value of each sort key, id included. */
function decodeCursor(cursor: string, keys: number): Param[] {
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(v) && v.length === keys && v.every((x) => x === null || typeof x === 'string' || typeof x === 'number')) {
      return v as Param[];
    }
  } catch {
    // fall through
  }
  throw badRequest([{ path: ['cursor'], message: 'is not a cursor from this search (send the same filter and sort as the page it came from)' }], '');
}

export async function searchRecords(core: Core, ex: Executor, o: StoredObject, input: SearchInput): Promise<SearchPage> {
  const fields = fieldsOf(o);
  const known = (n: string): boolean => fields.has(n);
  const errors: FieldError[] = [];
  if (input.filter !== undefined) errors.push(...checkFilter(input.filter, known));
  if (input.sort !== undefined) errors.push(...checkSort(input.sort, known));
  const limit = input.limit ?? DEFAULT_PAGE;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) errors.push({ path: ['limit'], message: `must be an integer from 1 to ${MAX_PAGE}` });
  if (errors.length > 0) throw badRequest(errors, 'search parameters are invalid');

  // The sort in the order given, then id (unique) so every order is total and a cursor names
  // one position. A list that names id already ends there: keys after it never decide.
  const given: SortSpec[] = input.sort ?? [];
  const idAt = given.findIndex((s) => s.attribute === 'id');
  const sort = idAt === -1 ? [...given, { attribute: 'id' }] : given.slice(0, idAt + 1);
  const keys = sort.map((s) => ({ name: s.attribute, sql: fields.get(s.attribute)!.sql, desc: s.direction === 'desc' }));

  const dialect = core.dialect;
  const compiler = new Compiler(fields, dialect, core.codecs);
  const where = input.filter ? compiler.filter(input.filter, ['filter']) : 'TRUE';
  if (compiler.errors.length > 0) throw badRequest(compiler.errors, 'filter values are invalid', true);
  const filterParams = [...compiler.params];
  const table = tableIdent(o.name);

  let after = '';
  const afterParams: Param[] = [];
  if (input.cursor !== undefined) {
    const last = decodeCursor(input.cursor, keys.length);
    // (k1, k2, …, id) strictly after the cursor in this order. SQLite puts NULLs first
    // ascending and last descending; each comparison honours that.
    const ors: string[] = [];
    keys.forEach((k, i) => {
      const eqs: string[] = [];
      for (let j = 0; j < i; j++) {
        eqs.push(dialect.nullSafeEqual(keys[j]!.sql, '?'));
        afterParams.push(last[j] ?? null);
      }
      const v = last[i] ?? null;
      let cmp: string;
      if (!k.desc) cmp = v === null ? `${k.sql} IS NOT NULL` : `${k.sql} > ?`;
      else cmp = v === null ? 'FALSE' : `(${k.sql} < ? OR ${k.sql} IS NULL)`;
      if (v !== null) afterParams.push(v);
      ors.push(`(${[...eqs, cmp].join(' AND ')})`);
    });
    after = ` AND (${ors.join(' OR ')})`;
  }
  const order = keys.map((k) => dialect.orderTerm(k)).join(', ');
  const rows = await ex.all<Record<string, unknown>>(`SELECT * FROM ${table} WHERE (${where})${after} ORDER BY ${order} LIMIT ?`, [...filterParams, ...afterParams, limit + 1]);
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  const lastRow = page.at(-1);
  const nextCursor =
    more && lastRow
      ? Buffer.from(JSON.stringify(keys.map((k) => lastRow[k.name] ?? null))).toString('base64url')
      : null;
  const records = page.map((r) => toRecord(core, o, r as never));
  // The total comes with the first page only (contract.md §3: `total` is optional). A COUNT
  // reads every matching row, so counting on each keyset page made a walk through N records
  // cost O(N²/limit) reads: 40% of each 500-record page of a 100,000-record export.
  if (input.cursor !== undefined) return { records, nextCursor };
  const total = intColumn(await ex.get(`SELECT COUNT(*) AS n FROM ${table} WHERE (${where})`, filterParams), 'n');
  return { records, nextCursor, total };
}
