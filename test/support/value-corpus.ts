import type { AttributeSpec, AttributeType } from '../../engine/model/attribute.js';
import { parseValue } from '../../engine/model/types/registry.js';

/**
 * Values of every attribute type, edge cases included, for tests that store them on each
 * backend (codec round trips, type-change conversions). Each is a value a record write
 * accepts (checked: `corpusValues` parses them), so what a backend stores is what it must
 * give back.
 */
export const OPTIONS = ['lead', 'won', 'Ä', 'a b', '42', 'true', 'x@y.io', 'https://e.io/', '2024-05-06'];

export const CORPUS_SPECS: Record<AttributeType, AttributeSpec> = {
  text: { name: 'v', type: 'text' },
  number: { name: 'v', type: 'number' },
  integer: { name: 'v', type: 'integer' },
  boolean: { name: 'v', type: 'boolean' },
  date: { name: 'v', type: 'date' },
  datetime: { name: 'v', type: 'datetime' },
  email: { name: 'v', type: 'email' },
  url: { name: 'v', type: 'url' },
  select: { name: 'v', type: 'select', options: OPTIONS },
  multiselect: { name: 'v', type: 'multiselect', options: OPTIONS },
  json: { name: 'v', type: 'json' },
  relation: { name: 'v', type: 'relation', target: 'thing' },
  document: { name: 'v', type: 'document' },
};

const ID1 = '0b7e4b1c-1f0a-4c1e-9a52-6c1d2f3e4a5b';
const ID2 = '9a1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c5d';

const RAW: Record<AttributeType, unknown[]> = {
  text: ['', 'plain', 'Ünïcødé ✓ 🚀', "it's \"quoted\" \\ back", 'line\nbreak\ttab', '42', '4.5', 'true', 'no', '2024-05-06', '2024-05-06T07:08:09Z', 'x@y.io', 'https://e.io/', 'lead', '["lead"]', '{"a":1}', ' 7 ', '-0'],
  number: [0, -1, 1.5, -2.25, 1e300, -1e-300, 9007199254740991, 0.1 + 0.2, 42, 1],
  integer: [0, 1, -1, 42, 9007199254740991, -9007199254740991],
  boolean: [true, false],
  date: ['0001-01-01', '2024-02-29', '9999-12-31'],
  datetime: ['0001-01-01T00:00:00.000Z', '2024-05-06T07:08:09.123Z', '2024-05-06T00:00:00.000Z', '9999-12-31T23:59:59.999Z'],
  email: ['x@y.io', 'Ünï@exämple.com'],
  url: ['https://e.io/', 'http://127.0.0.1:4400/v1?q=1#f'],
  select: OPTIONS,
  multiselect: [[], ['lead'], ['won', 'Ä'], ['42'], ['true']],
  json: [{ a: [1, 'x', null, true], b: { c: 'd' } }, [], [1, 2.5, 'three'], 'text', 42, 1.5, true, false, { z: 1, a: 2 }, ['lead'], '2024-05-06'],
  relation: [ID1, ID2],
  document: [ID1],
};

export const MULTI_SPECS: Record<'relation' | 'document', AttributeSpec> = {
  relation: { name: 'v', type: 'relation', target: 'thing', multiple: true },
  document: { name: 'v', type: 'document', multiple: true },
};
const RAW_MULTI: Record<'relation' | 'document', unknown[]> = {
  relation: [[], [ID1], [ID1, ID2]],
  document: [[ID2], [ID1, ID2]],
};

/** Every corpus value of a spec, parsed (as a record write would store it). */
export function corpusValues(spec: AttributeSpec): unknown[] {
  const raw = spec.multiple && (spec.type === 'relation' || spec.type === 'document') ? RAW_MULTI[spec.type] : RAW[spec.type];
  return raw.map((v) => {
    const parsed = parseValue(spec, v);
    if (!parsed.ok) throw new Error(`corpus value ${JSON.stringify(v)} is not a ${spec.type}: ${parsed.message}`);
    return parsed.value;
  });
}

/** Every spec of the corpus: one per type, and the `multiple` forms. */
export const ALL_SPECS: AttributeSpec[] = [...Object.values(CORPUS_SPECS), ...Object.values(MULTI_SPECS)];
