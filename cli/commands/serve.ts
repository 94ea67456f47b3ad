import { relative } from 'node:path';
import type { CommandRun } from '../context.js';
import { CliError } from '../errors.js';
import { keyReasonLine, startServer } from '../local-server.js';

/** `schemasync serve` (contract.md §4): the bundled local server. */
export interface ServeOptions {
  host: string;
  port: string;
  data: string;
  rateLimit: boolean;
  quiet?: boolean;
}

export const run: CommandRun<ServeOptions> = async (ctx) => {
  const { host, data } = ctx.options;
  const port = Number(ctx.options.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new CliError(`--port must be a whole number from 0 to 65535, got "${ctx.options.port}"`);
  }
  const server = await startServer({
    dataDir: data,
    host,
    port,
    rateLimit: ctx.options.rateLimit !== false,
    // One JSON line per request with its id (issue 3); --quiet silences it.
    logger: ctx.options.quiet ? false : { level: 'info' },
  });
  const c = ctx.colors;
  const shown = relative(ctx.cwd, server.credentialsPath) || server.credentialsPath;
  // One write, so a reader never sees the URL line without the key that belongs to it.
  const lines = [
    `schemasync server listening on ${c.bold(server.baseUrl)}`,
    `data: ${server.dataDir}${ctx.options.rateLimit === false ? ' (rate limits off)' : ''}`,
  ];
  if (server.createdKey) {
    const why = keyReasonLine(server, shown);
    if (why) lines.push(`${c.yellow('warning:')} ${why}`);
    lines.push(`owner API key (shown once): ${c.bold(server.createdKey)}`);
    lines.push(`saved with the base URL to ${shown} (mode 0600)`);
  }
  ctx.stdout.write(`${lines.join('\n')}\n`);

  // Graceful stop (issue 3): stop accepting, let in-flight requests finish, close the database.
  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      if (!ctx.options.quiet) ctx.stderr.write(`\n${signal}: shutting down\n`);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await server.close();
  return 0;
};
