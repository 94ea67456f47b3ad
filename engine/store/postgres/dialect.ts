import type { Dialect, OrderKey } from '../port.js';

/**
 * PostgreSQL's SQL where databases differ (engine/store/port.ts).
 *
 * Placeholders stay `?`: the shared SQL mixes the dialect's placeholders with literal `?`s,
 * and the driver numbers them all in one pass (placeholders.ts), so both count alike.
 */
export const postgresDialect: Dialect = {
  placeholder: () => '?',
  // List columns hold JSON text (codecs.ts), read as jsonb here. List operands are the JSON
  // text of one primitive (`element`): `@>` is true when the array holds an element equal to
  // it (PostgreSQL's "an array may contain a primitive value" rule) and, for a json
  // attribute holding one primitive, when it is equal — json_each's answers in SQLite.
  // (SQLite also looks into an object's values and equates true with 1; PostgreSQL compares
  // JSON values exactly.)
  listContainsAny: (column, params) =>
    params.length === 1
      ? `(${column})::jsonb @> ${params[0]!}::jsonb`
      : `(${column})::jsonb @> ANY (ARRAY[${params.map((p) => `${p}::jsonb`).join(', ')}])`,
  // Lists of ids (relation/document `multiple`) are JSON arrays of strings; a set is text.
  jsonListSet: (param) => `(SELECT jsonb_array_elements_text(${param}::jsonb))`,
  listHasAnyIn: (column, set) => `EXISTS (SELECT 1 FROM jsonb_array_elements_text((${column})::jsonb) AS e(v) WHERE e.v IN ${set})`,
  listAllIn: (column, set) => `NOT EXISTS (SELECT 1 FROM jsonb_array_elements_text((${column})::jsonb) AS e(v) WHERE e.v NOT IN ${set})`,
  // jsonb_agg over no rows is NULL: an emptied list becomes NULL, as SQLite's NULLIF(…, '[]').
  listWithout: (column, set) =>
    `(SELECT jsonb_agg(e.v ORDER BY e.i)::text FROM jsonb_array_elements((${column})::jsonb) WITH ORDINALITY AS e(v, i) WHERE (e.v #>> '{}') NOT IN ${set})`,
  notOrNull: (condition) => `NOT COALESCE((${condition}), FALSE)`,
  // Record tables carry a hidden identity column (ddl.ts): PostgreSQL has no rowid.
  insertionOrder: '"_ss_seq"',
  listJoined: (column) => `(SELECT string_agg(e.v, ', ' ORDER BY e.i) FROM jsonb_array_elements_text((${column})::jsonb) WITH ORDINALITY AS e(v, i))`,
  nullSafeEqual: (a, b) => `${a} IS NOT DISTINCT FROM ${b}`,
  nullSafeDistinct: (a, b) => `${a} IS DISTINCT FROM ${b}`,
  // PostgreSQL's default is the opposite of SQLite's (NULLs last ascending); say it, so a
  // keyset cursor walks the same order on both backends.
  orderTerm: (key: OrderKey) => `${key.sql} ${key.desc ? 'DESC NULLS LAST' : 'ASC NULLS FIRST'}`,
  // strpos, not ILIKE: the operand is plain text (no `%`/`_` to escape), and lower() on
  // the C-collated text columns (codecs.ts) folds ASCII only, as SQLite's lower() does.
  containsText: (column, param) => `strpos(lower(${column}), lower(${param}::text)) > 0`,
  startsWith: (column, param, again) => `left(${column}, length(${param}::text)) = ${again}`,
};
