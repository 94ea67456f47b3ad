import type { AttributeSpec } from './attribute.js';
import type { FilterOp, Scalar } from './filter.js';
import { ILL_FORMED_TEXT, isWellFormed } from './stored-values.js';
import { isMultiValued, typeDef } from './types/registry.js';

/**
 * The one check of a filter operand against its attribute (contract.md §3), used by record
 * search (which binds the result) and by view declarations (which report it). An operand is
 * the value the attribute would hold (`element`: one element of a list attribute), so a
 * filter compares like with like once the backend encodes it (datetimes in UTC with
 * milliseconds, select values among the options). Whatever a
 * record write refuses as a value ("5" for a number) a filter refuses as an operand, but
 * the write constraints (required, unique, min, max, lengths, pattern) do not apply.
 */
export type Operand = { ok: true; value: unknown; element: boolean } | { ok: false; message: string };

const ORDERING = new Set<FilterOp>(['gt', 'gte', 'lt', 'lte']);

/** The attribute as operands are parsed against: its type and what defines its values, no constraints. */
export function operandSpec(spec: AttributeSpec): AttributeSpec {
  const { name, type, options, target, multiple } = spec;
  return { name, type, ...(options ? { options } : {}), ...(target ? { target } : {}), ...(multiple ? { multiple } : {}) };
}

/** `spec` should come from operandSpec (once per attribute, not per operand). `op` is never isNull. */
export function filterOperand(spec: AttributeSpec, op: FilterOp, value: Scalar): Operand {
  const def = typeDef(spec.type);
  const rule = def.filter;
  const name = JSON.stringify(spec.name);
  const multi = isMultiValued(spec);
  // A string the table could not hold as sent cannot equal (or order against) a stored one.
  if (typeof value === 'string' && !isWellFormed(value)) return mismatch(name, value, ILL_FORMED_TEXT);
  const notFor = (what: string): Operand => ({ ok: false, message: `${op} does not apply to ${name} (${spec.type}${spec.multiple ? ', multiple' : ''}): ${what}` });
  if (ORDERING.has(op)) {
    if (!rule.ordered) return notFor(multi ? 'use eq, ne, in, nin or contains (one element)' : 'use eq, ne, in, nin or isNull');
    if (value === null) return { ok: false, message: `the filter on ${name} compares ${op} with null: use isNull` };
    if (rule.text) return typeof value === 'string' ? { ok: true, value, element: false } : mismatch(name, value, 'must be compared with a string');
  } else if (op === 'contains' || op === 'startsWith') {
    if (rule.text) return typeof value === 'string' ? { ok: true, value, element: false } : mismatch(name, value, 'must be compared with a string');
    if (!(multi && op === 'contains')) return notFor(`${op} applies to text attributes${multi ? ' (contains: also to lists, one element)' : ''}`);
  }
  if (value === null) return { ok: true, value: null, element: false };
  if (rule.operand) {
    const parsed = rule.operand(value, spec);
    return parsed.ok ? { ok: true, value: parsed.value, element: true } : mismatch(name, value, parsed.message);
  }
  const parsed = def.parse(value, spec);
  return parsed.ok ? { ok: true, value: parsed.value, element: false } : mismatch(name, value, parsed.message);
}

function mismatch(name: string, value: Scalar, message: string): Operand {
  return { ok: false, message: `the filter on ${name} compares with ${JSON.stringify(value)}, but ${name} ${message}` };
}
