import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createRequire } from 'node:module';
import { createMcpServer, projectLoader } from '../../engine/mcp/index.js';
import type { CommandRun } from '../context.js';
import { clientFor, configPathOf } from '../instance.js';

/**
 * `schemasync mcp` (contract.md §4, §6): an MCP server on stdio for the configured instance,
 * thin over engine/mcp. stdout belongs to the protocol, so the one status line goes to
 * stderr. Read-only unless --allow-writes; the key decides the rest. It runs until the
 * client closes stdin (or a stop signal).
 */
interface McpOptions {
  allowWrites?: boolean;
}

const { version } = createRequire(import.meta.url)('../../../package.json') as { version: string };

export const run: CommandRun<McpOptions> = async (ctx) => {
  const client = clientFor(ctx);
  const writes = ctx.options.allowWrites === true;
  const server = createMcpServer({ client, writes, project: projectLoader(configPathOf(ctx), ctx.cwd), version });
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  await server.connect(new StdioServerTransport());
  ctx.stderr.write(`schemasync mcp: ${client.baseUrl} on stdio (${writes ? 'writes allowed where the key may write' : 'read-only; --allow-writes to offer write tools'})\n`);
  await closed;
  await server.close();
  return 0;
};
