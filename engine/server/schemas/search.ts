import { responses, securityRequired } from './common.js';

/** Cross-object search (contract.md §3 "Cross-object search"). */
export const MAX_SEARCH_LIMIT = 100;
export const DEFAULT_SEARCH_LIMIT = 20;
/** Longer queries are refused by the schema: no one types 1,000 characters to find a record. */
const MAX_QUERY = 1000;

const hit = {
  type: 'object',
  required: ['object', 'id', 'score', 'snippet', 'highlights', 'attribute'],
  properties: {
    object: { type: 'string', description: "the hit's object" },
    id: { type: 'string', description: 'the record id' },
    score: { type: 'number', description: 'relevance, higher is better (negated bm25)' },
    snippet: { type: 'string', description: 'plain text around the best match (never markup)' },
    highlights: {
      type: 'array',
      description: '[start, end) offsets of the matched terms in snippet',
      items: { type: 'array', items: { type: 'integer' }, minItems: 2, maxItems: 2 },
    },
    attribute: { type: 'string', description: 'the attribute (or document slot) that matched best' },
  },
} as const;

const limit = { type: 'integer', minimum: 1, maximum: MAX_SEARCH_LIMIT, default: DEFAULT_SEARCH_LIMIT } as const;
const query = {
  type: 'string',
  maxLength: MAX_QUERY,
  description: 'words match by prefix ("acm" finds Acme), "quoted phrases" exactly; case and accents are ignored',
} as const;

export const searchSchema = {
  operationId: 'search',
  tags: ['search'], security: securityRequired,
  summary: 'Full-text search across objects (text-like attributes and document titles), best first',
  body: {
    type: 'object',
    required: ['query'],
    additionalProperties: false,
    properties: {
      query,
      objects: { type: 'array', maxItems: 1000, items: { type: 'string', minLength: 1, maxLength: 200 }, description: 'only these objects (default: all the key may read)' },
      limit,
    },
  },
  response: responses(200, { type: 'array', items: hit }, { list: true }),
};

export const globalSearchSchema = {
  operationId: 'globalSearch',
  tags: ['search'], security: securityRequired,
  summary: 'Full-text search across every object the key may read, best first',
  querystring: {
    type: 'object',
    required: ['q'],
    properties: { q: query, limit },
  },
  response: responses(200, { type: 'array', items: hit }, { list: true }),
};
