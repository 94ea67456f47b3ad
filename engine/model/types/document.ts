import { DEFAULT_MAX_FILE_SIZE } from '../attribute.js';
import { SIZE_PATTERN_SOURCE } from '../sizes.js';
import { parseIds } from './checks.js';
import type { AttributeTypeDef } from './type-def.js';

export const document: AttributeTypeDef = {
  type: 'document',
  noun: 'a document id',
  aliases: ['file', 'attachment'],
  valueSchema: { type: ['string', 'array'], items: { type: 'string' } },
  fields: {
    accepts: {
      type: 'array',
      minItems: 1,
      items: { type: 'string', pattern: '^[a-z0-9][a-z0-9!#$&^_.+-]*/([a-z0-9][a-z0-9!#$&^_.+-]*|\\*)$' },
      description: 'Accepted MIME types; `image/*` accepts every image type.',
    },
    maxFileSize: {
      anyOf: [
        { type: 'integer', minimum: 1 },
        { type: 'string', pattern: SIZE_PATTERN_SOURCE },
      ],
      description: 'Largest accepted file: bytes, or a size such as 512KB or 10MB. Default 25MB.',
    },
    multiple: { type: 'boolean', description: 'More than one file; false is the single-file rule.' },
  },
  uniqueAllowed: false,
  reference: 'document',
  list: 'multiple',
  fullText: false,
  implied: { maxFileSize: DEFAULT_MAX_FILE_SIZE },
  // Document existence, accepts and sizes are checked by the store against the files.
  parse: (value, spec) => parseIds(value, spec, 'document'),
  widensTo: [],
  convertFrom: () => undefined,
  filter: { ordered: false, text: false, operand: (value, spec) => parseIds(value, { ...spec, multiple: false }, 'document') },
};
