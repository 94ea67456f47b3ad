import { errorResponse, errorResponses, securityRequired } from './common.js';

/** POST /v1/mcp (contract.md §3 "Also served"): JSON-RPC 2.0 messages of the MCP Streamable HTTP transport. */
const jsonRpcMessage = {
  type: 'object',
  required: ['jsonrpc'],
  additionalProperties: true,
  properties: {
    jsonrpc: { type: 'string', const: '2.0' },
    id: { type: ['string', 'integer'] },
    method: { type: 'string' },
    params: { type: 'object', additionalProperties: true },
  },
} as const;

export const mcpPostSchema = {
  operationId: 'mcp',
  tags: ['mcp'], security: securityRequired,
  summary: 'MCP over Streamable HTTP (stateless; answers as JSON). Tools as the key may use them; write tools only with serve --mcp-writes',
  body: { anyOf: [jsonRpcMessage, { type: 'array', minItems: 1, maxItems: 100, items: jsonRpcMessage }] },
  response: {
    200: { ...jsonRpcMessage, description: 'The JSON-RPC response' },
    202: { type: 'null', description: 'Accepted (a notification or response; no body)' },
    ...errorResponses,
  },
};

/** GET and DELETE /v1/mcp only answer 405: left out of openapi.json (one schema for two methods could not give each its own operationId). */
export const mcpOtherSchema = {
  hide: true,
  tags: ['mcp'], security: securityRequired,
  summary: 'Not offered: this MCP endpoint is stateless, with no server-sent event stream and no session to end (405)',
  response: { 405: { ...errorResponse, description: 'Method not allowed' }, default: errorResponse },
};
