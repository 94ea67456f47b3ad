import type { AttributeSpec } from '../attribute.js';
import { typeDef } from './registry.js';

/**
 * One stored value, as the API gives it under `from`, as the value it becomes under `to`
 * (issue 4: type changes convert with the registry's convertFrom). undefined: it cannot
 * convert. The one conversion rule: the column rebuild (engine/store/<backend>/convert.ts),
 * the data probe and the planner's in-memory facts in tests all call it, so a change the
 * probe passes converts the same way when it applies.
 */
export function convertValue(value: unknown, from: AttributeSpec, to: AttributeSpec): unknown {
  if (value === null || value === undefined) return null;
  if (from.type !== to.type) return typeDef(to.type).convertFrom(value);
  // Same type, multiple toggled (a type whose column is a list only with `multiple`): one id ↔ a list of ids.
  if (typeDef(to.type).list === 'multiple') {
    if (to.multiple && !Array.isArray(value)) return [value];
    if (!to.multiple && Array.isArray(value)) return value.length === 0 ? null : value.length === 1 ? value[0] : value;
  }
  return value;
}
