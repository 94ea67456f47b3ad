import type { Dialect, OrderKey } from '../port.js';

/** SQLite's SQL where databases differ (engine/store/port.ts). */
export const sqliteDialect: Dialect = {
  placeholder: () => '?',
  listContainsAny: (column, params) =>
    params.length === 1
      ? `EXISTS (SELECT 1 FROM json_each(${column}) WHERE value = ${params[0]!})`
      : `EXISTS (SELECT 1 FROM json_each(${column}) WHERE value IN (${params.join(', ')}))`,
  jsonListSet: (param) => `(SELECT value FROM json_each(${param}))`,
  listHasAnyIn: (column, set) => `EXISTS (SELECT 1 FROM json_each(${column}) WHERE value IN ${set})`,
  listAllIn: (column, set) => `NOT EXISTS (SELECT 1 FROM json_each(${column}) WHERE value NOT IN ${set})`,
  listWithout: (column, set) => `NULLIF((SELECT json_group_array(value ORDER BY key) FROM json_each(${column}) WHERE value NOT IN ${set}), '[]')`,
  listJoined: (column) => `(SELECT group_concat(value, ', ') FROM json_each(${column}))`,
  nullSafeEqual: (a, b) => `${a} IS ${b}`,
  nullSafeDistinct: (a, b) => `${a} IS NOT ${b}`,
  notOrNull: (condition) => `NOT IFNULL((${condition}), 0)`,
  // SQLite already sorts NULLs first ascending and last descending: no NULLS clause needed.
  orderTerm: (key: OrderKey) => `${key.sql} ${key.desc ? 'DESC' : 'ASC'}`,
  containsText: (column, param) => `instr(lower(${column}), lower(${param})) > 0`,
  startsWith: (column, param, again) => `substr(${column}, 1, length(${param})) = ${again}`,
  insertionOrder: '_rowid_',
};
