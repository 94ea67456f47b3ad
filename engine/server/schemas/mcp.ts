import { errorResponse, securityRequired } from './common.js';

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
  tags: ['mcp'], security: securityRequired,
  summary: 'MCP over Streamable HTTP (stateless; answers as JSON). Tools as the key may use them; write tools only with serve --mcp-writes',
  body: { anyOf: [jsonRpcMessage, { type: 'array', minItems: 1, maxItems: 100, items: jsonRpcMessage }] },
  response: {
    200: { ...jsonRpcMessage, description: 'The JSON-RPC response' },
    202: { type: 'null', description: 'Accepted (a notification or response; no body)' },
    default: errorResponse,
  },
};

export const mcpOtherSchema = {
  tags: ['mcp'], security: securityRequired,
  summary: 'Not offered: this MCP endpoint is stateless, with no server-sent event stream and no session to end (405)',
  response: { 405: { ...errorResponse, description: 'Method not allowed' }, default: errorResponse },
};
