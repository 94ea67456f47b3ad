import type { AttributeSpec } from '../../model/attribute.js';
import { convertValue } from '../../model/types/convert.js';
import { typeDef } from '../../model/types/registry.js';
import { CODECS, type SqlValue } from './codecs.js';

/** One stored value under `from`, as the API value it becomes under `to` (engine/model/types/convert.ts). */
export function convertApiValue(column: SqlValue, from: AttributeSpec, to: AttributeSpec): unknown {
  return column === null ? null : convertValue(CODECS[from.type].decode(column, from), from, to);
}

/** Column value under `from` → column value under `to`; undefined when it does not fit `to`. */
export function convertColumnValue(column: SqlValue, from: AttributeSpec, to: AttributeSpec): SqlValue | undefined {
  const converted = convertApiValue(column, from, to);
  if (converted === undefined) return undefined;
  if (converted === null) return null;
  const parsed = typeDef(to.type).parse(converted, to);
  if (!parsed.ok) return undefined;
  return CODECS[to.type].encode(parsed.value, to);
}
