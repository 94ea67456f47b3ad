import { FILTER_SCHEMA } from '../../declaration/json-schema.js';
import { IF_MATCH_PATTERN, deletedIdSchema, etagHeader, freeMapping, lookupParams, responses, securityRequired } from './common.js';
import { DEFAULT_PAGE, MAX_BULK, MAX_BULK_WRITE, MAX_PAGE } from '../../model/limits.js';

/** The record as every route returns it (contract.md §3). */
export const recordOut = {
  type: 'object',
  required: ['id', 'object', 'version', 'createdAt', 'updatedAt', 'values'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    object: { type: 'string' },
    version: { type: 'integer' },
    createdAt: { type: 'string' },
    updatedAt: { type: 'string' },
    values: { type: 'object', additionalProperties: true },
  },
} as const;


const objectParam = lookupParams({ objectName: "the object's name" });
const recordParams = lookupParams({ objectName: "the object's name", id: 'the record id (a UUID)' });

const idempotencyHeader = {
  type: 'object',
  properties: {
    'idempotency-key': {
      type: 'string',
      minLength: 1,
      maxLength: 255,
      description: 'Repeat with the same key and body within 24 h replays the first answer; another body → 409.',
    },
  },
} as const;

/** The bulk writes also take `Prefer: return=minimal` (server/prefer.ts). */
const bulkWriteHeaders = {
  type: 'object',
  properties: {
    ...idempotencyHeader.properties,
    prefer: {
      type: 'string',
      description: 'return=minimal answers the count written ({ created } / { updated }) instead of the records, with Preference-Applied: return=minimal.',
    },
  },
} as const;

/**
 * A bulk write's answer: its records. Under `Prefer: return=minimal` it is `{ created: n }` /
 * `{ updated: n }` instead; the document says so in words rather than as a union, so a client
 * generated from it types the default answer plainly (`data.records`), as most callers read it.
 */
const recordsOrCount = (count: 'created' | 'updated'): object => ({
  type: 'object',
  required: ['records'],
  properties: { records: { type: 'array', items: recordOut } },
  description: `The records written; with Prefer: return=minimal, { ${count}: n } instead.`,
});

const tags = ['records'];
const security = securityRequired;

export const createRecordSchema = {
  operationId: 'createRecord',
  tags, security, summary: 'Create a record',
  params: objectParam,
  headers: idempotencyHeader,
  body: freeMapping,
  response: responses(201, recordOut),
};

export const getRecordSchema = {
  operationId: 'getRecord',
  tags, security, summary: 'Get a record (etag: "<version>")',
  params: recordParams,
  response: responses(200, recordOut, { headers: etagHeader }),
};

export const updateRecordSchema = {
  operationId: 'updateRecord',
  tags, security, summary: 'Update a record (partial; if-match required)',
  params: recordParams,
  headers: {
    type: 'object',
    required: ['if-match'],
    properties: {
      'if-match': { type: 'string', pattern: IF_MATCH_PATTERN, description: '"<version>", a bare version, or *' },
    },
  },
  body: { ...freeMapping, minProperties: 1 },
  response: responses(200, recordOut, { headers: etagHeader }),
};

export const deleteRecordSchema = {
  operationId: 'deleteRecord',
  tags, security, summary: 'Delete a record',
  params: recordParams,
  response: responses(200, deletedIdSchema),
};

export const bulkCreateSchema = {
  operationId: 'bulkCreateRecords',
  tags, security, summary: 'Create many records (1..10,000), all or nothing',
  params: objectParam,
  headers: bulkWriteHeaders,
  body: {
    type: 'object',
    required: ['records'],
    additionalProperties: false,
    properties: { records: { type: 'array', minItems: 1, maxItems: MAX_BULK_WRITE, items: freeMapping } },
  },
  response: responses(201, recordsOrCount('created')),
};

export const bulkUpdateSchema = {
  operationId: 'bulkUpdateRecords',
  tags, security, summary: 'Update many records (1..10,000), all or nothing',
  params: objectParam,
  headers: bulkWriteHeaders,
  body: {
    type: 'object',
    required: ['records'],
    additionalProperties: false,
    properties: {
      records: {
        type: 'array',
        minItems: 1,
        maxItems: MAX_BULK_WRITE,
        items: {
          type: 'object',
          required: ['id', 'values'],
          additionalProperties: false,
          properties: {
            id: { type: 'string', format: 'uuid' },
            version: { type: 'integer', minimum: 1 },
            values: { ...freeMapping, minProperties: 1 },
          },
        },
      },
    },
  },
  response: responses(200, recordsOrCount('updated')),
};

export const bulkDeleteSchema = {
  operationId: 'bulkDeleteRecords',
  tags, security, summary: 'Delete many records (1..1000 ids), all or nothing',
  params: objectParam,
  headers: idempotencyHeader,
  body: {
    type: 'object',
    required: ['ids'],
    additionalProperties: false,
    properties: { ids: { type: 'array', minItems: 1, maxItems: MAX_BULK, items: { type: 'string', format: 'uuid' } } },
  },
  response: responses(200, { type: 'object', required: ['deleted'], properties: { deleted: { type: 'integer' } } }),
};

export const searchRecordsSchema = {
  operationId: 'searchRecords',
  tags, security, summary: 'Search the records of one object (filter, sort, keyset cursor)',
  params: objectParam,
  body: {
    type: 'object',
    additionalProperties: false,
    properties: {
      filter: FILTER_SCHEMA,
      sort: {
        type: 'array',
        maxItems: 10,
        items: {
          type: 'object',
          required: ['attribute'],
          additionalProperties: false,
          properties: {
            attribute: { type: 'string', minLength: 1 },
            direction: { type: 'string', enum: ['asc', 'desc'] },
          },
        },
      },
      limit: { type: 'integer', minimum: 1, maximum: MAX_PAGE, default: DEFAULT_PAGE },
      cursor: { type: 'string', minLength: 1, maxLength: 4000 },
    },
  },
  response: responses(200, { type: 'array', items: recordOut }, { list: true }),
};
