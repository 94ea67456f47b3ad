import type { AttributeSpec } from '../../model/attribute.js';
import { typeDef } from '../../model/types/registry.js';
import { CODECS, type SqlValue } from './codecs.js';

/**
 * One stored value under `from`, as the API value it becomes under `to` (issue 4: type
 * changes convert with the registry's convertFrom). undefined: it cannot convert. Used by
 * the column rebuild and by the data probe, so a change the probe passes converts the same way.
 */
export function convertApiValue(column: SqlValue, from: AttributeSpec, to: AttributeSpec): unknown {
  if (column === null) return null;
  const api = CODECS[from.type].decode(column, from);
  if (from.type !== to.type) return typeDef(to.type).convertFrom(api);
  // Same type, multiple toggled (relation/document): one id ↔ a list of ids.
  if (to.type === 'relation' || to.type === 'document') {
    if (to.multiple && !Array.isArray(api)) return [api];
    if (!to.multiple && Array.isArray(api)) return api.length === 0 ? null : api.length === 1 ? api[0] : api;
  }
  return api;
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
