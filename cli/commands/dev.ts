import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { readCredentials } from '../../engine/server/local.js';
import type { CommandRun } from '../context.js';
import { CliError } from '../errors.js';
import { configPathOf, sameUrl } from '../instance.js';
import { pickTarget, refuseUnwatched } from '../target.js';
import { catchStopSignals, corsOrigins, portOf, type ServerOptions, databaseConnections, databaseLine, databaseUrl, keyReasonLine, startServer, stopServer, unignoredDataWarning } from '../local-server.js';
import { parseAllowDestructive, parseDebounce, runWatch, sdkPush, syncCommandFor, usualInstance } from '../watch-session.js';

/**
 * `schemasync dev` (contract.md §4, issue 6): the local server, a first sync and watch, in
 * one process with one log. The request log is off (the sync lines are the log); the
 * server is the same one `serve` runs, so SDK, curl and the other commands reach it.
 */
export interface DevOptions extends ServerOptions {
  allowDestructive?: string | boolean;
  debounce?: string;
}

export const run: CommandRun<DevOptions> = async (ctx) => {
  const { host } = ctx.options;
  const port = portOf(ctx.options.port);
  const debounceMs = parseDebounce(ctx.options.debounce);
  const cors = corsOrigins(ctx.options.cors);
  const database = databaseUrl(ctx.options.database, process.env);
  const connections = databaseConnections(ctx.options.databaseConnections, process.env, database);
  const allowDestructive = parseAllowDestructive(ctx.options.allowDestructive);
  const configPath = configPathOf(ctx);
  const target = pickTarget(ctx, configPath, process.env);
  if (target?.explicit) refuseUnwatched(target, 'dev');
  // The data folder sits next to schemasync.yaml (unless absolute), where the other
  // commands look for its credentials.json when run with the same --config.
  const dataDir = isAbsolute(ctx.options.data) ? ctx.options.data : resolve(dirname(configPath), ctx.options.data);

  // Signals are caught from the start, so a Ctrl-C during start-up still exits cleanly.
  const signals = catchStopSignals();
  let server;
  try {
    server = await startServer({ dataDir, database, databaseConnections: connections, host, port, rateLimit: ctx.options.rateLimit !== false,
      mcpWrites: ctx.options.mcpWrites === true, studio: ctx.options.studio !== false, logger: false, ...(cors ? { cors } : {}) });
  } catch (err) {
    signals.dispose();
    throw err;
  }
  try {
    // startLocalServer made sure credentials.json holds a usable owner key (a fresh one when it was gone).
    const apiKey = server.createdKey ?? readCredentials(dataDir)?.apiKey;
    if (!apiKey) throw new CliError(`no API key in ${server.credentialsPath}`);
    const c = ctx.colors;
    const shown = (p: string) => relative(ctx.cwd, p) || p;
    ctx.stdout.write(`schemasync dev: server on ${c.bold(server.baseUrl)}${ctx.options.rateLimit === false ? ' (rate limits off)' : ''}\n`);
    ctx.stdout.write(`data: ${shown(server.dataDir)}  credentials: ${shown(server.credentialsPath)} (mode 0600)\n`);
    const dbLine = databaseLine(database, connections);
    if (dbLine) ctx.stdout.write(`${dbLine}\n`);
    // contract.md §9: dev prints Studio's address at start.
    if (server.studioUrl) ctx.stdout.write(`studio: ${c.bold(server.studioUrl)} (sign in with the owner API key)\n`);
    if (server.createdKey) {
      const why = keyReasonLine(server, shown(server.credentialsPath));
      if (why) ctx.stdout.write(`${c.yellow('warning:')} ${why}\n`);
      ctx.stdout.write(`owner API key (shown once): ${c.bold(server.createdKey)}\n`);
    }
    const unignored = unignoredDataWarning(server.credentialsPath, shown(server.dataDir));
    if (unignored) ctx.stdout.write(`${c.yellow('warning:')} ${unignored}\n`);
    const usual = usualInstance(ctx);
    if (usual.baseUrl !== undefined && !sameUrl(usual.baseUrl, server.baseUrl)) {
      // Other commands run here (sync, plan, records…) follow the usual resolution, not dev.
      ctx.stdout.write(
        `${c.yellow('warning:')} ${usual.from} is ${usual.baseUrl}, not this server: other commands here will talk to that one (pass --base-url ${server.baseUrl} to reach dev)\n`,
      );
    }
    const target = { baseUrl: server.baseUrl, dataDir: server.dataDir, credentialsPath: server.credentialsPath };
    return await runWatch(ctx, {
      configPath,
      debounceMs,
      allowDestructive,
      push: sdkPush(server.baseUrl, apiKey),
      syncCommand: () => syncCommandFor(ctx, target),
      stopSignal: signals.first,
      quiet: ctx.options.quiet === true,
      // The server's own SQLite writes are no reason to sync, wherever --data puts them.
      ignoredPaths: [server.dataDir],
    });
  } finally {
    await stopServer(server, signals, (again) => {
      ctx.stdout.write(`${again}: closing open connections now\n`);
    });
  }
};
