import type { Dialect, OrderKey } from '../port.js';

/** SQLite's SQL where databases differ (engine/store/port.ts). */
export const sqliteDialect: Dialect = {
  placeholder: () => '?',
  listContainsAny: (column, params) =>
    params.length === 1
      ? `EXISTS (SELECT 1 FROM json_each(${column}) WHERE value = ${params[0]!})`
      : `EXISTS (SELECT 1 FROM json_each(${column}) WHERE value IN (${params.join(', ')}))`,
  nullSafeEqual: (a, b) => `${a} IS ${b}`,
  nullSafeDistinct: (a, b) => `${a} IS NOT ${b}`,
  // SQLite already sorts NULLs first ascending and last descending: no NULLS clause needed.
  orderTerm: (key: OrderKey) => `${key.sql} ${key.desc ? 'DESC' : 'ASC'}`,
  containsText: (column, param) => `instr(lower(${column}), lower(${param})) > 0`,
  startsWith: (column, param, again) => `substr(${column}, 1, length(${param})) = ${again}`,
};
