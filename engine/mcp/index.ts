/** The MCP server of contract.md §6: over stdio (`schemasync mcp`) and mounted at POST /v1/mcp. */
export { createMcpServer, offered, type McpServerOptions } from './server.js';
export { serveMcpRequest, injectFetch, type McpHttpOptions } from './http.js';
export { TOOL_LIST, type ToolDef, type ProjectLoader } from './tools.js';
export { INPUT_SCHEMAS, type ToolName } from './schemas.js';
export { projectLoader } from './project.js';
