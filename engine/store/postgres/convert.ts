import type { AttributeSpec } from '../../model/attribute.js';
import { typeDef } from '../../model/types/registry.js';
import type { Param } from '../port.js';
import { CODECS } from './codecs.js';

/**
 * One stored value under `from` → its column value under `to` (undefined: it does not fit),
 * by the registry's rules exactly as the SQLite backend converts (engine/store/sqlite/
 * convert.ts): decode with this backend's codec, convertFrom, parse, encode.
 */
export function convertColumnValue(column: unknown, from: AttributeSpec, to: AttributeSpec): Param | undefined {
  if (column === null) return null;
  let api = CODECS[from.type].decode(column, from);
  if (from.type !== to.type) api = typeDef(to.type).convertFrom(api);
  else if (to.type === 'relation' || to.type === 'document') {
    // Same type, multiple toggled: one id ↔ a list of ids.
    if (to.multiple && !Array.isArray(api)) api = [api];
    else if (!to.multiple && Array.isArray(api)) api = api.length === 0 ? null : api.length === 1 ? api[0] : api;
  }
  if (api === undefined) return undefined;
  if (api === null) return null;
  const parsed = typeDef(to.type).parse(api, to);
  if (!parsed.ok) return undefined;
  return CODECS[to.type].encode(parsed.value, to);
}
