import type { AttributeSpec, AttributeType } from '../../model/attribute.js';
import { convertValue } from '../../model/types/convert.js';
import { typeDef } from '../../model/types/registry.js';
import type { Codec, Param } from '../port.js';

/** One stored value under `from`, as the API value it becomes under `to` (engine/model/types/convert.ts). */
function convertApiValue(codecs: Record<AttributeType, Codec>, column: unknown, from: AttributeSpec, to: AttributeSpec): unknown {
  return column === null || column === undefined ? null : convertValue(codecs[from.type].decode(column, from), from, to);
}

/** Column value under `from` → column value under `to`; undefined when it does not fit `to`. */
export function convertColumnValue(codecs: Record<AttributeType, Codec>, column: unknown, from: AttributeSpec, to: AttributeSpec): Param | undefined {
  const converted = convertApiValue(codecs, column, from, to);
  if (converted === undefined) return undefined;
  if (converted === null) return null;
  const parsed = typeDef(to.type).parse(converted, to);
  if (!parsed.ok) return undefined;
  return codecs[to.type].encode(parsed.value, to);
}

/** Column value → API value; null stays null. */
export function decodeColumn(codecs: Record<AttributeType, Codec>, column: unknown, spec: AttributeSpec): unknown {
  return column === null || column === undefined ? null : codecs[spec.type].decode(column, spec);
}

/** A checked filter operand (engine/model/filter-operand.ts) as the column, or one list element, holds it. */
export function encodeOperand(codecs: Record<AttributeType, Codec>, value: unknown, element: boolean, spec: AttributeSpec): Param {
  if (value === null) return null;
  const codec = codecs[spec.type];
  if (element) return codec.element ? codec.element(value, spec) : (value as Param);
  return codec.encode(value, spec);
}
