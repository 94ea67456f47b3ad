import { parseIds } from './checks.js';
import type { AttributeTypeDef } from './type-def.js';

export const relation: AttributeTypeDef = {
  type: 'relation',
  noun: 'a record id',
  aliases: ['reference', 'ref'],
  valueSchema: { type: ['string', 'array'], items: { type: 'string' } },
  fields: {
    target: { type: 'string', description: 'The name of the object this attribute points to.' },
    multiple: { type: 'boolean', description: 'A list of record ids instead of one.' },
  },
  requiredFields: ['target'],
  uniqueAllowed: true,
  reference: 'record',
  list: 'multiple',
  fullText: false,
  implied: { multiple: false },
  // That the ids exist in the target object is checked by the store (it needs the data).
  parse: (value, spec) => parseIds(value, spec, 'record'),
  widensTo: [],
  convertFrom: () => undefined,
  // Ids are random: no order. With `multiple` the operand is one of the ids.
  filter: { ordered: false, text: false, operand: (value, spec) => parseIds(value, { ...spec, multiple: false }, 'record') },
};
