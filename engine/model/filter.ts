import type { FieldError } from '../errors.js';
import type { AttributeSpec } from './attribute.js';
import { SYSTEM_COLUMNS, systemColumnSpec } from './names.js';

/**
 * The filter and sort grammar of record search and views (contract.md §3):
 * `{ attr: value }` (equality) or `{ attr: { op: value } }`, combinators and/or/not.
 * This module is its one definition: views in declarations and search bodies are both
 * checked here; the store compiles what passed into SQL.
 */
export const FILTER_OPS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'contains', 'startsWith', 'isNull'] as const;
export type FilterOp = (typeof FILTER_OPS)[number];
export type Scalar = string | number | boolean | null;

export type Condition = Scalar | Partial<Record<FilterOp, Scalar | Scalar[]>>;
export interface Filter {
  and?: Filter[];
  or?: Filter[];
  not?: Filter;
  [attribute: string]: Condition | Filter[] | Filter | undefined;
}

export interface SortSpec {
  attribute: string;
  direction?: 'asc' | 'desc';
}

/** Attributes every record has and that search may filter and sort on: the system columns (engine/model/names.ts). */
export const SYSTEM_FILTER_FIELDS: readonly string[] = SYSTEM_COLUMNS;

/** The spec a filter on a system field compares by (search and views alike), or undefined. */
export const systemFilterSpec: (name: string) => AttributeSpec | undefined = systemColumnSpec;

const COMBINATORS = new Set(['and', 'or', 'not']);
const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const isScalar = (v: unknown): v is Scalar =>
  v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));

/** Depth cap: a hostile filter must not recurse the server into a stack overflow. */
const MAX_DEPTH = 16;
/**
 * Size caps, so every filter that passes here compiles to SQL that SQLite accepts: one
 * `in`/`nin` list binds one variable a value (a 40,000-value list hit "too many SQL
 * variables", a 500), and every condition is one node of an expression tree SQLite caps at
 * depth 1000 (a long `and` list hit "Expression tree is too large"). A 400 names the limit.
 */
export const MAX_LIST_VALUES = 1000;
export const MAX_FILTER_VALUES = 10_000;
export const MAX_FILTER_CONDITIONS = 200;

/**
 * Check a filter's shape and that it names known attributes. `known(name)` says whether
 * an attribute exists; errors carry paths relative to `base` (`["filter", "and", 0, "stage"]`).
 */
export function checkFilter(
  filter: unknown,
  known: (name: string) => boolean,
  base: (string | number)[] = ['filter'],
): FieldError[] {
  const errors: FieldError[] = [];
  let conditions = 0;
  let values = 0;
  walk(filter, base, 0);
  if (conditions > MAX_FILTER_CONDITIONS) {
    errors.push({ path: base, message: `has ${conditions} conditions and sub-filters; at most ${MAX_FILTER_CONDITIONS} are allowed (use in for many values of one attribute)` });
  }
  if (values > MAX_FILTER_VALUES) {
    errors.push({ path: base, message: `lists ${values} values in total; at most ${MAX_FILTER_VALUES} are allowed` });
  }
  return errors;

  function walk(node: unknown, path: (string | number)[], depth: number): void {
    if (depth > MAX_DEPTH) {
      errors.push({ path, message: `nests deeper than ${MAX_DEPTH} levels` });
      return;
    }
    if (!isPlainObject(node)) {
      errors.push({ path, message: 'must be an object of conditions' });
      return;
    }
    conditions++; // a (sub-)filter is a node of the SQL expression too, even an empty one
    for (const key of Object.keys(node)) {
      const value = node[key];
      const here = [...path, key];
      if (key === 'and' || key === 'or') {
        if (!Array.isArray(value) || value.length === 0) {
          errors.push({ path: here, message: `must be a non-empty list of filters` });
          continue;
        }
        value.forEach((f, i) => walk(f, [...here, i], depth + 1));
      } else if (key === 'not') {
        walk(value, here, depth + 1);
      } else if (!known(key)) {
        errors.push({ path: here, message: `unknown attribute "${key}"` });
      } else {
        checkCondition(value, here);
      }
    }
  }

  function checkCondition(value: unknown, path: (string | number)[]): void {
    if (isScalar(value)) {
      conditions++;
      values++;
      return;
    }
    if (!isPlainObject(value)) {
      errors.push({ path, message: 'must be a value or an object of operators' });
      return;
    }
    const ops = Object.keys(value);
    if (ops.length === 0) errors.push({ path, message: 'needs at least one operator' });
    for (const op of ops) {
      const v = value[op];
      const here = [...path, op];
      conditions++;
      if (!(FILTER_OPS as readonly string[]).includes(op)) {
        errors.push({ path: here, message: `unknown operator "${op}" (use ${FILTER_OPS.join(', ')})` });
      } else if (op === 'in' || op === 'nin') {
        if (!Array.isArray(v) || !v.every(isScalar)) errors.push({ path: here, message: 'must be a list of values' });
        else if (v.length > MAX_LIST_VALUES) errors.push({ path: here, message: `lists ${v.length} values; at most ${MAX_LIST_VALUES} are allowed (split the search)` });
        else values += v.length;
        continue;
      } else if (op === 'isNull') {
        if (typeof v !== 'boolean') errors.push({ path: here, message: 'must be true or false' });
      } else if (op === 'contains' || op === 'startsWith') {
        if (typeof v !== 'string') errors.push({ path: here, message: 'must be a string' });
      } else if (!isScalar(v)) {
        errors.push({ path: here, message: 'must be a single value' });
      }
      values++;
    }
  }
}

export function isCombinator(key: string): boolean {
  return COMBINATORS.has(key);
}

/** Check a sort list against known attributes. */
export function checkSort(
  sort: unknown,
  known: (name: string) => boolean,
  base: (string | number)[] = ['sort'],
): FieldError[] {
  if (!Array.isArray(sort)) return [{ path: base, message: 'must be a list of { attribute, direction }' }];
  const errors: FieldError[] = [];
  sort.forEach((s, i) => {
    const path = [...base, i];
    if (!isPlainObject(s) || typeof s['attribute'] !== 'string') {
      errors.push({ path, message: 'must be { attribute, direction }' });
      return;
    }
    if (!known(s['attribute'])) errors.push({ path: [...path, 'attribute'], message: `unknown attribute "${s['attribute']}"` });
    const dir = s['direction'];
    if (dir !== undefined && dir !== 'asc' && dir !== 'desc') {
      errors.push({ path: [...path, 'direction'], message: 'must be asc or desc' });
    }
  });
  return errors;
}
