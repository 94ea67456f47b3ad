import { relative } from 'node:path';
import type { CommandRun } from '../context.js';
import { catchStopSignals, corsOrigins, portOf, type ServerOptions, databaseConnections, databaseLine, databaseUrl, keyReasonLine, startServer, stopServer, unignoredDataWarning } from '../local-server.js';

/** `schemasync serve` (contract.md §4): the bundled local server. */
export type ServeOptions = ServerOptions;

export const run: CommandRun<ServeOptions> = async (ctx) => {
  const { host, data } = ctx.options;
  const port = portOf(ctx.options.port);
  const cors = corsOrigins(ctx.options.cors);
  const database = databaseUrl(ctx.options.database, process.env);
  const connections = databaseConnections(ctx.options.databaseConnections, process.env, database);
  // Caught before the server listens, so a signal during start-up still closes the database.
  const signals = catchStopSignals();
  let server;
  try {
    server = await startServer({
      dataDir: data,
      database,
      databaseConnections: connections,
      host,
      port,
      rateLimit: ctx.options.rateLimit !== false,
      mcpWrites: ctx.options.mcpWrites === true,
      studio: ctx.options.studio !== false,
      ...(cors ? { cors } : {}),
      // One JSON line per request with its id (issue 3); --quiet silences it.
      logger: ctx.options.quiet ? false : { level: 'info' },
    });
  } catch (err) {
    signals.dispose();
    throw err;
  }
  const c = ctx.colors;
  const shown = relative(ctx.cwd, server.credentialsPath) || server.credentialsPath;
  // One write, so a reader never sees the URL line without the key that belongs to it.
  const lines = [
    `schemasync server listening on ${c.bold(server.baseUrl)}`,
    `data: ${server.dataDir}${ctx.options.rateLimit === false ? ' (rate limits off)' : ''}`,
  ];
  const dbLine = databaseLine(database, connections);
  if (dbLine) lines.push(dbLine);
  if (server.studioUrl) lines.push(`studio: ${c.bold(server.studioUrl)} (sign in with an API key)`);
  if (server.createdKey) {
    const why = keyReasonLine(server, shown);
    if (why) lines.push(`${c.yellow('warning:')} ${why}`);
    lines.push(`owner API key (shown once): ${c.bold(server.createdKey)}`);
    lines.push(`saved with the base URL to ${shown} (mode 0600)`);
  }
  const unignored = unignoredDataWarning(server.credentialsPath, relative(ctx.cwd, server.dataDir) || server.dataDir);
  if (unignored) lines.push(`${c.yellow('warning:')} ${unignored}`);
  ctx.stdout.write(`${lines.join('\n')}\n`);

  // Graceful stop (issue 3): stop accepting, let in-flight requests finish (for the grace
  // period; a second signal cuts it short), close the database.
  const signal = await signals.first;
  if (!ctx.options.quiet) ctx.stderr.write(`\n${signal}: shutting down\n`);
  await stopServer(server, signals, (again) => {
    if (!ctx.options.quiet) ctx.stderr.write(`${again}: closing open connections now\n`);
  });
  return 0;
};
