import { Command, CommanderError, Option } from 'commander';
import { createRequire } from 'node:module';
import { CliError, formatServiceErrorLine, githubError, hintLine } from './errors.js';
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
  .option('--target <name>', 'a target of schemasync.yaml `targets:`: its baseUrl, key (apiKeyEnv) and policy (also SCHEMASYNC_TARGET)')
  .option('--json', 'machine-readable output: one JSON document on stdout')
  .option('--no-color', 'plain output without colours')
  .showHelpAfterError('(run with --help for usage)')
  .configureHelp({ sortSubcommands: false })
  // Usage errors come back to the catch below (every command inherits this), so --json can
  // answer them with a document too.
  .exitOverride();

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
      const format = (command.opts() as { format?: string }).format;
      await addHint(err, command.name(), args, ctx);
      // `--format json` is the same request as --json on the commands that have it
      const json = global.json === true || format === 'json';
      code = report(err, json ? failure : undefined, format === 'github');
    }
    process.exit(code);
  };
}

/**
 * A service refusal the command left without a hint gets the CLI's own (cli/hints.ts): a
 * 403 names the role and scope the command needs, a 429 from a local server its switch.
 */
async function addHint(err: unknown, name: string, args: string[], ctx: { cwd: string; global: GlobalOptions; options: unknown }): Promise<void> {
  const e = err as { status?: unknown; code?: string; hint?: string } | null;
  if (!e || typeof e !== 'object' || err instanceof CliError || typeof e.status !== 'number' || e.hint) return;
  const { serviceHint } = await import('./hints.js');
  const hint = serviceHint({ status: e.status, code: e.code }, { name, args, ctx });
  if (hint) e.hint = hint;
}


/**
 * One line to stderr and an exit code, for every way a command can fail; with `json`, also
 * the failure document on stdout: `error` is `{ status, code, message }` as in sync's
 * refusals, plus the hint, and the service's field errors or the declaration diagnostics.
 */
/** The answer's per-field errors under its line (`  records.2.amount: must be a number`), as many as fit a screen. */
function fieldErrorLines(details: unknown, max = 20): string {
  if (!Array.isArray(details)) return '';
  const lines: string[] = [];
  for (const d of details as { path?: unknown; message?: unknown }[]) {
    if (typeof d?.message !== 'string') continue;
    const path = Array.isArray(d.path) && d.path.length > 0 ? `${d.path.join('.')}: ` : '';
    lines.push(`  ${path}${d.message}`);
  }
  if (lines.length > max) lines.splice(max, lines.length - max, `  … and ${lines.length - max} more (--json lists them all)`);
  return lines.map((l) => `${l}\n`).join('');
}

function report(err: unknown, json?: Record<string, unknown>, github = false): number {
  const e = err as { name?: string; status?: number; code?: string; message?: string; hint?: string; exitCode?: number; details?: unknown };
  if (json) {
    const error: Record<string, unknown> = typeof e?.status === 'number' ? { status: e.status, ...(e.code !== undefined ? { code: e.code } : {}) } : {};
    error['message'] = err instanceof Error ? err.message : String(err);
    if (e?.hint) error['hint'] = e.hint;
    if (err instanceof CliError && err.diagnostics) error['diagnostics'] = err.diagnostics;
    else if (e?.details !== undefined) error['details'] = e.details;
    process.stdout.write(`${JSON.stringify({ ...json, error }, null, 2)}\n`);
  }
  const line =
    err instanceof CliError || !(typeof e?.status === 'number' && typeof e.message === 'string')
      ? `Error: ${err instanceof Error ? err.message : String(err)}`
      : // ServiceRequestError from the SDK (kept structural so this file imports no SDK code).
        formatServiceErrorLine(e.status!, e.code, e.message);
  // A failure with no file to point at (an unreachable instance, no project file) is still
  // one annotation for a workflow step; declaration errors printed theirs at their lines.
  if (github && !(err instanceof CliError && err.diagnostics)) process.stdout.write(githubError(line.replace(/^Error: /, '')));
  process.stderr.write(`${line}\n${fieldErrorLines(e?.details)}${hintLine(e?.hint)}`);
  if (err instanceof CliError) return err.exitCode;
  if (typeof e?.status === 'number' && typeof e.message === 'string') return 1;
  if (process.env['SCHEMASYNC_DEBUG'] && err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
  return 1;
}

const formatOption = (extra: string[] = []) =>
  new Option('--format <format>', 'output format').choices(['text', 'json', 'github', ...extra]).default('text');

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
  .option('--strict', 'treat warnings as errors (exit 1)')
  .action(action(() => import('./commands/validate.js'), {}));

program
  .command('plan')
  .description('dry-run push: show what sync would change (+ create, ~ change, - drop, ! conflict)')
  .option('--diff', 'also show a unified diff of stored vs declared YAML')
  .addOption(formatOption(['markdown']))
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
  .command('drift')
  .description('compare the last applied declaration, the instance and the files: pending edits, runtime changes, or both')
  .addOption(new Option('--format <format>', 'output format').choices(['text', 'json', 'markdown']).default('text'))
  .option('--detailed-exitcode', 'exit 0 when nothing drifted, 2 when something did, 1 on error')
  .action(action(() => import('./commands/drift.js'), {}));

program
  .command('history')
  .description("the source's pushes, newest first: version, when, which key, plan hash, destructive targets")
  .option('--limit <n>', 'pushes per page (1..500)', '20')
  .option('--all', 'every push, following the pages')
  .action(action(() => import('./commands/history.js'), {}));

program
  .command('search')
  .description('full-text search across objects: words match by prefix, "quoted phrases" exactly')
  .argument('<query>', 'what to look for')
  .option('--objects <names>', 'only these objects (comma-separated)')
  .option('--limit <n>', 'hits to show (1..100, default 20)')
  .action(action(() => import('./commands/search.js'), {}));

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
    .option('--database <url>', 'a postgres:// URL: keep the data in PostgreSQL instead of SQLite (env SCHEMASYNC_DATABASE_URL); files stay under --data')
    .option('--database-connections <n>', 'with --database: the most connections this process opens, default 20 (env SCHEMASYNC_DATABASE_CONNECTIONS)')
    .option('--no-rate-limit', 'turn off the per-IP rate limits')
    .option('--mcp-writes', 'let POST /v1/mcp offer write tools to keys that may write records')
    .option('--no-studio', 'do not serve Studio, the admin page at /_/')
    .option('--cors <origins>', "origins whose pages may call the server, comma-separated, or '*' for any (default: http://localhost and http://127.0.0.1, any port)")
    .option('--quiet', 'no request log');

serveOptions(program.command('serve').description('run the bundled local server')).action(action(() => import('./commands/serve.js')));

serveOptions(program.command('dev').description('serve + sync + watch in one process: the local development loop'))
  .option('--allow-destructive [targets]', 'let the loop apply destructive steps: all, or only the listed targets')
  .option('--debounce <ms>', 'quiet time before a burst of saves is synced', '75')
  .action(action(() => import('./commands/dev.js')));

const collect = (value: string, previous: string[] = []) => [...previous, value];

program
  .command('records')
  .description('record access: list|get|create|update|delete|import|export <object>')
  .argument('<action>', 'list, get, create, update, delete, import or export')
  .argument('<object>', 'object name')
  .argument('[rest...]', 'the record id (get, update, delete) or the file, - for stdin (import)')
  .option('--filter <json>', "list, export: a filter, e.g. '{\"stage\":\"won\"}'")
  .option('--sort <attr:dir>', 'list: attr, attr:asc or attr:desc; repeat it or give a comma list', collect)
  .option('--limit <n>', 'list: at most this many records (one page: 1..500, default 50; with --all no cap)')
  .option('--all', 'list: follow the cursor through every page')
  .option('--cursor <cursor>', 'list: start at this cursor (printed when more records remain)')
  .option('--data <json>', "create, update: the values as a JSON object")
  .option('--set <attr=value>', 'create, update: one value, typed by the attribute (repeatable; attr= is null)', collect)
  .option('--if-match <version>', 'update: the version being changed (or * for any)')
  .option('--read-first', 'update: read the record and send the version just read as if-match')
  .option('--format <format>', 'import, export: ndjson or csv (default: from the file extension; export: ndjson)')
  .option('--out <file>', 'export: write here instead of stdout')
  .option('--force', 'export: overwrite --out if it exists')
  .option('--batch <n>', 'import: records per bulk-create request (1..10000)', '1000')
  .option('--dry-run', 'import: check every row, write nothing')
  .option('--on-error <mode>', 'import: stop at the first refused row, or skip refused rows and go on', 'stop')
  .option('--errors <file>', 'import: write each refused row (line, errors, values) to this NDJSON file')
  .option('--no-progress', 'import: no progress bar, even in a terminal')
  .action(action(() => import('./commands/records.js')));

program
  .command('keys')
  .description('API keys: create <name> --role <role> [--scopes a,b] | list | revoke <id>')
  .argument('<action>', 'create, list or revoke')
  .argument('[rest...]', 'the key name (create) or id (revoke)')
  .option('--role <role>', 'role of a new key: owner, admin, member, viewer or a custom role', 'member')
  .option('--scopes <list>', 'comma-separated scopes limiting a new key (records:read,records:write,…)')
  .action(action(() => import('./commands/keys.js'), {}));

program
  .command('roles')
  .description('roles: list | get <name> | create <name> --allow deal:read,create [--schema read] | update <name> … | delete <name>')
  .argument('<action>', 'list, get, create, update or delete')
  .argument('[name]', 'the role name')
  .option('--allow <object:actions>', 'create/update: record actions on an object (or *), repeatable', (v: string, prev: string[] = []) => [...prev, v])
  .option('--schema <access>', 'create/update: none, read or write')
  .option('--label <text>', 'create/update: a label')
  .option('--data <json>', 'create/update: the whole role as JSON (flags override its fields)')
  .action(action(() => import('./commands/roles.js'), {}));

program
  .command('views')
  .description('views: list | get <name> | put <name> --object o [--filter json] [--sort a:desc] [--columns a,b] | delete <name> | run <name>')
  .argument('<action>', 'list, get, put, delete or run')
  .argument('[name]', 'the view name')
  .option('--object <name>', 'put: the object the view reads')
  .option('--filter <json>', 'put: a filter, as in record search')
  .option('--sort <list>', 'put: attr[:asc|desc],… ')
  .option('--columns <list>', 'put: attributes shown, comma-separated')
  .option('--label <text>', 'put: a label')
  .option('--data <json>', 'put: the whole view as JSON (flags override its fields)')
  .option('--limit <n>', 'run: records per page (1..500)')
  .option('--all', 'run: follow every page')
  .action(action(() => import('./commands/views.js'), {}));

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
  .description('an MCP server on stdio for the configured instance (read-only unless --allow-writes)')
  .option('--allow-writes', 'offer the write tools (create_record, update_record, delete_record) to a key that may write records')
  .action(action(() => import('./commands/mcp.js')));

program.parseAsync(process.argv).catch((err: unknown) => {
  if (!(err instanceof CommanderError)) return process.exit(report(err));
  // commander has printed the usage error (or help, or the version) already; with --json a
  // script reading stdout gets one document as for every other failure (contract.md §4).
  if (err.exitCode !== 0 && process.argv.includes('--json')) {
    process.stdout.write(`${JSON.stringify({ error: { code: err.code, message: err.message.replace(/^error: /, '') } }, null, 2)}\n`);
  }
  return process.exit(err.exitCode);
});
