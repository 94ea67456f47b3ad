import { Command, Option } from 'commander';
import { createRequire } from 'node:module';
import { CliError, formatServiceErrorLine } from './errors.js';
import { makeColors, type CommandRun, type GlobalOptions } from './context.js';

/**
 * The commander program. Every command of contract.md §4 is declared here with its
 * flags, but its module is imported only when it runs, so `--version` and `--help`
 * load nothing else. This is also the only place that exits the process.
 */
const require = createRequire(import.meta.url);
const { version } = require('../../package.json') as { version: string };

type Loader = () => Promise<{ run: CommandRun<never> }>;

const program = new Command('schemasync')
  .description('Keep the schema of a Records and Schema service in git.')
  .version(version, '-v, --version')
  .option('--base-url <url>', 'instance base URL (overrides SCHEMASYNC_BASE_URL and schemasync.yaml)')
  .option('--api-key <key>', 'API key (overrides SCHEMASYNC_API_KEY and local credentials)')
  .option('--config <file>', 'path to schemasync.yaml', undefined)
  .option('--json', 'machine-readable output: one JSON document on stdout')
  .option('--no-color', 'plain output without colours')
  .showHelpAfterError('(run with --help for usage)')
  .configureHelp({ sortSubcommands: false });

/**
 * `failure`: set for the commands with `--json` output; with --json their failures print
 * one JSON document on stdout too (these fields plus `error`), so a script reading stdout
 * always gets a document. sync's says `applied: false`, as its refusals do.
 */
function action(load: Loader, failure?: Record<string, unknown>) {
  return async (...params: unknown[]): Promise<void> => {
    const command = params[params.length - 1] as Command;
    const args = command.args;
    const global = program.opts<GlobalOptions>();
    const ctx = {
      args,
      options: command.opts() as never,
      global,
      cwd: process.cwd(),
      stdout: process.stdout,
      stderr: process.stderr,
      colors: makeColors(global.color !== false && !process.env['NO_COLOR']),
    };
    let code: number;
    try {
      const mod = await load();
      code = await mod.run(ctx);
    } catch (err) {
      // `--format json` is the same request as --json on the commands that have it
      const json = global.json === true || (command.opts() as { format?: string }).format === 'json';
      code = report(err, json ? failure : undefined);
    }
    process.exit(code);
  };
}

function notYet(name: string): Loader {
  return async () => ({
    run: async () => {
      throw new CliError(`'schemasync ${name}' is not yet available in this version.`);
    },
  });
}

/**
 * One line to stderr and an exit code, for every way a command can fail; with `json`, also
 * the failure document on stdout: `error` is `{ status, code, message }` as in sync's
 * refusals, plus the hint, and the service's field errors or the declaration diagnostics.
 */
function report(err: unknown, json?: Record<string, unknown>): number {
  const e = err as { name?: string; status?: number; code?: string; message?: string; hint?: string; exitCode?: number; details?: unknown };
  if (json) {
    const error: Record<string, unknown> = typeof e?.status === 'number' ? { status: e.status, ...(e.code !== undefined ? { code: e.code } : {}) } : {};
    error['message'] = err instanceof Error ? err.message : String(err);
    if (e?.hint) error['hint'] = e.hint;
    if (err instanceof CliError && err.diagnostics) error['diagnostics'] = err.diagnostics;
    else if (e?.details !== undefined) error['details'] = e.details;
    process.stdout.write(`${JSON.stringify({ ...json, error }, null, 2)}\n`);
  }
  if (err instanceof CliError) {
    process.stderr.write(`Error: ${err.message}\n${err.hint ? `  ${err.hint}\n` : ''}`);
    return err.exitCode;
  }
  if (typeof e?.status === 'number' && typeof e.message === 'string') {
    // ServiceRequestError from the SDK (kept structural so this file imports no SDK code).
    process.stderr.write(`${formatServiceErrorLine(e.status, e.code, e.message)}\n${e.hint ? `  ${e.hint}\n` : ''}`);
    return 1;
  }
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`Error: ${message}\n`);
  if (process.env['SCHEMASYNC_DEBUG'] && err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
  return 1;
}

const formatOption = () =>
  new Option('--format <format>', 'output format').choices(['text', 'json', 'github']).default('text');

program
  .command('init')
  .description('write schemasync.yaml and a starter schema/ folder')
  .argument('[dir]', 'folder to create the project in (default: the current folder)')
  .option('--source <id>', 'schema source id', undefined)
  .option('--force', 'overwrite existing files')
  .action(action(() => import('./commands/init.js')));

program
  .command('validate')
  .description('check the declaration files offline; exit 1 on any error')
  .addOption(formatOption())
  .action(action(() => import('./commands/validate.js'), {}));

program
  .command('plan')
  .description('dry-run push: show what sync would change (+ create, ~ change, - drop, ! conflict)')
  .option('--diff', 'also show a unified diff of stored vs declared YAML')
  .addOption(formatOption())
  .option('--detailed-exitcode', 'exit 0 when nothing to do, 2 when changes are pending, 1 on error or conflict')
  .option('--out <file>', 'save the plan and the source version it was made against')
  .action(action(() => import('./commands/plan.js'), {}));

program
  .command('sync')
  .description('plan and push the declaration to the instance')
  .option('--allow-destructive [targets]', 'allow data loss: all, or only the listed targets (deal.amount,legacy)')
  .option('-y, --yes', 'apply without asking')
  .option('--plan <file>', 'apply a saved plan, only if the source is unchanged since')
  .option('--data <dir>', "a local server's data folder: take its key from <dir>/credentials.json")
  .addOption(formatOption())
  .action(action(() => import('./commands/sync.js'), { applied: false }));

program
  .command('watch')
  .description('validate, plan and push on every change of the declaration files')
  .option('--allow-destructive [targets]', 'let watch apply destructive steps: all, or only the listed targets (deal.amount,legacy)')
  .option('--debounce <ms>', 'quiet time before a burst of saves is synced', '75')
  .action(action(() => import('./commands/watch.js')));

program
  .command('pull')
  .description("write the stored schema (a source's, or runtime objects) as declaration YAML")
  .option('--runtime', 'pull runtime objects instead of the source')
  .option('--out <dir>', 'folder to write into (default: the schema folder)')
  .option('--force', 'write even if the folder already holds declaration files (same-named files are overwritten)')
  .action(action(() => import('./commands/pull.js'), {}));

const serveOptions = (cmd: Command): Command =>
  cmd
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on', '4400')
    .option('--data <dir>', 'folder for the SQLite database and files', '.schemasync')
    .option('--no-rate-limit', 'turn off the per-IP rate limits')
    .option('--cors <origins>', "origins whose pages may call the server, comma-separated, or '*' for any (default: http://localhost and http://127.0.0.1, any port)")
    .option('--quiet', 'no request log');

serveOptions(program.command('serve').description('run the bundled local server')).action(action(() => import('./commands/serve.js')));

serveOptions(program.command('dev').description('serve + sync + watch in one process: the local development loop'))
  .option('--allow-destructive [targets]', 'let the loop apply destructive steps: all, or only the listed targets')
  .option('--debounce <ms>', 'quiet time before a burst of saves is synced', '75')
  .action(action(() => import('./commands/dev.js')));

program
  .command('records')
  .description('record access: list|get|create|update|delete|import|export <object>')
  .argument('<action>', 'list, get, create, update, delete, import or export')
  .argument('<object>', 'object name')
  .argument('[rest...]', 'id, JSON values or file, depending on the action')
  .action(action(notYet('records')));

program
  .command('keys')
  .description('API keys: create <name> --role <role> [--scopes a,b] | list | revoke <id>')
  .argument('<action>', 'create, list or revoke')
  .argument('[rest...]', 'the key name (create) or id (revoke)')
  .option('--role <role>', 'role of a new key: owner, admin, member, viewer or a custom role', 'member')
  .option('--scopes <list>', 'comma-separated scopes limiting a new key (records:read,records:write,…)')
  .action(action(() => import('./commands/keys.js'), {}));

for (const [name, what] of [
  ['roles', 'roles: create|list|update|delete'],
  ['views', 'views: list|get|put|delete'],
] as const) {
  program
    .command(name)
    .description(what)
    .argument('<action>')
    .argument('[rest...]')
    .action(action(notYet(name)));
}

program
  .command('files')
  .description('files: upload <path> [--to object/recordId/attribute] | get <id> | download <id> [--out f] | rm <id>')
  .argument('<action>', 'upload, get, download or rm')
  .argument('[rest...]', 'a path (upload) or a file id')
  .option('--to <target>', 'upload and attach to a document attribute: object/recordId/attribute')
  .option('--title <title>', 'document title (with --to; default: the file name)')
  .option('--name <name>', 'stored file name (default: the base name of the path)')
  .option('--type <mime>', 'content type (default: guessed from the extension)')
  .option('--out <file>', 'download: write here (default: the stored name in the current folder; - for stdout)')
  .option('--force', 'download: overwrite an existing file')
  .action(action(() => import('./commands/files.js'), {}));

program
  .command('mcp')
  .description('an MCP server on stdio for the configured instance')
  .action(action(notYet('mcp')));

program.parseAsync(process.argv).catch((err: unknown) => process.exit(report(err)));
