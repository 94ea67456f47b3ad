import { RANGE_FIELDS, checkRange, fail } from './checks.js';
import type { AttributeTypeDef } from './type-def.js';

export function toNumber(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
  if (typeof value === 'boolean') return value ? 1 : 0;
  return undefined;
}

export const number: AttributeTypeDef = {
  type: 'number',
  noun: 'a number',
  aliases: ['float', 'double', 'decimal', 'numeric', 'real'],
  valueSchema: { type: 'number' },
  fields: RANGE_FIELDS,
  uniqueAllowed: true,
  list: 'never',
  fullText: false,
  parse: (value, spec) =>
    typeof value === 'number' && Number.isFinite(value) ? checkRange(value, spec) : fail('must be a number'),
  widensTo: ['text', 'json'],
  convertFrom: toNumber,
  filter: { ordered: true, text: false },
};
