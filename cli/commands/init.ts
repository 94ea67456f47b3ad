import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import type { CommandRun } from '../context.js';
import { commandName } from '../command-name.js';
import { CliError } from '../errors.js';

interface InitOptions {
  source?: string;
  force?: boolean;
}

// The same rule project.schema.json holds for `source` (engine/declaration/json-schema.ts);
// repeated as a literal so `init` does not load the engine just to name a folder.
const SOURCE_ID = /^[a-z][a-z0-9_-]{0,62}$/;

function sourceFromFolder(dir: string): string {
  const id = basename(dir)
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/^[^a-z]+/, '')
    .slice(0, 63);
  return SOURCE_ID.test(id) ? id : 'app';
}

const projectFile = (source: string): string => `# yaml-language-server: $schema=./node_modules/schemasync/schemas/project.schema.json
# schemasync project file. The API key never goes here: use --api-key,
# SCHEMASYNC_API_KEY, or the local server's credentials file.
source: ${source}
schema: schema
baseUrl: http://127.0.0.1:4400/v1
`;

const starter = (schemaUrl: string): string => `# yaml-language-server: $schema=${schemaUrl}
# A first object. Add attributes, run \`schemasync validate\`, then \`schemasync sync\`.
objects:
  contact:
    label: Contact
    attributes:
      name:   { type: text, label: Name, required: true, maxLength: 120 }
      email:  { type: email, label: Email, unique: true }
      status: { type: select, label: Status, options: [lead, customer, archived], default: lead }
      notes:  { type: text, label: Notes }

views:
  customers:
    object: contact
    filter: { status: customer }
    sort: [{ attribute: name, direction: asc }]
    columns: [name, email]
`;

/**
 * The local server's data folder (`dev`/`serve` default `.schemasync/`, next to
 * schemasync.yaml) holds the database and credentials.json with the owner key: it must
 * never be one `git add .` away from a commit (issue 13).
 */
const IGNORE_ENTRY = '.schemasync/';
const IGNORE_BLOCK = `# schemasync: the local server's data (database, files, credentials.json with the owner key)\n${IGNORE_ENTRY}\n`;
const ignoresData = (text: string): boolean => text.split(/\r?\n/).some((l) => /^\/?\.schemasync\/?(\*\*?)?\s*$/.test(l.trim()));

/** Writes .gitignore, or adds the entry to an existing one; says which, or nothing when it was there. */
function ensureGitignore(dir: string): 'created' | 'updated' | undefined {
  const file = join(dir, '.gitignore');
  if (!existsSync(file)) {
    writeFileSync(file, IGNORE_BLOCK);
    return 'created';
  }
  const text = readFileSync(file, 'utf8');
  if (ignoresData(text)) return undefined;
  appendFileSync(file, `${text === '' || text.endsWith('\n') ? '' : '\n'}${IGNORE_BLOCK}`);
  return 'updated';
}

/** A path as a POSIX shell reads it: "Next" lines are pasted as they are (`cd 'My Project'`). */
function shellQuote(path: string): string {
  return /^[\w@%+=:,./-]+$/.test(path) ? path : `'${path.replace(/'/g, `'\\''`)}'`;
}

/**
 * `schemasync init [dir]` (contract.md §4): a working starter project that validates as
 * written. Never overwrites a file unless --force: a user's schema is the thing this tool
 * exists to keep safe.
 */
export const run: CommandRun<InitOptions> = async (ctx) => {
  const dir = resolve(ctx.cwd, ctx.args[0] ?? '.');
  const source = ctx.options.source ?? sourceFromFolder(dir);
  if (!SOURCE_ID.test(source)) {
    throw new CliError(`Invalid source id "${source}"`, {
      hint: 'Use lowercase letters, digits, _ and -, starting with a letter, at most 63 characters.',
    });
  }
  const schemaDir = join(dir, 'schema');
  const files = [
    { path: join(dir, 'schemasync.yaml'), text: projectFile(source) },
    {
      path: join(schemaDir, `contact.yaml`),
      text: starter(relative(schemaDir, join(dir, 'node_modules/schemasync/schemas/declaration.schema.json')).split('\\').join('/')),
    },
  ];
  const shown = (p: string): string => {
    const rel = relative(ctx.cwd, p);
    return rel === '' || rel.startsWith('..') ? p : rel;
  };
  const existing = files.filter((f) => existsSync(f.path));
  if (existing.length > 0 && !ctx.options.force) {
    throw new CliError(`${existing.map((f) => shown(f.path)).join(' and ')} already exist${existing.length === 1 ? 's' : ''}; nothing was written`, {
      hint: 'Pass --force to overwrite.',
    });
  }
  mkdirSync(schemaDir, { recursive: true });
  for (const f of files) writeFileSync(f.path, f.text);
  const ignored = ensureGitignore(dir);
  const c = ctx.colors;
  for (const f of files) ctx.stdout.write(`${c.green('created')} ${shown(f.path)}\n`);
  if (ignored) ctx.stdout.write(`${c.green(ignored)} ${shown(join(dir, '.gitignore'))} (ignores ${IGNORE_ENTRY}, the local server's data)\n`);
  const cd = dir === ctx.cwd ? '' : shellQuote(shown(dir));
  const me = commandName();
  ctx.stdout.write(`\nNext:\n${cd ? `  cd ${cd}\n` : ''}  ${me} validate\n  ${me} dev\n`);
  return 0;
};
