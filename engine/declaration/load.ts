import { readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { globSync } from 'tinyglobby';
import { LineCounter, isAlias, parseDocument, visit, type Document } from 'yaml';
import type { Declaration, ProjectConfig } from '../model/declaration.js';
import { runSchema } from './ajv.js';
import { translateAjvErrors } from './ajv-messages.js';
import { hasErrors, isPlainObject, type Diagnostic, type Path } from './diagnostic.js';
import { locate, type Position } from './locate.js';
import { closest } from './suggest.js';
import { validateDeclaration } from './validate.js';

/**
 * Reading schemasync.yaml and the declaration files it names, keeping source positions
 * so every diagnostic says file:line:column (contract.md §2), and reporting every problem
 * of every file in one run. Hostile input is refused before it costs anything: files over
 * MAX_FILE_BYTES are not read, aliases are capped, duplicate keys are errors.
 */
export const MAX_FILE_BYTES = 10 * 1024 * 1024;
/** Enough for any honest use of anchors; an alias bomb needs thousands. */
export const MAX_ALIAS_COUNT = 100;
export const DEFAULT_CONFIG = 'schemasync.yaml';

export interface LocatedDiagnostic extends Diagnostic {
  /** Absolute path of the file. */
  file: string;
  line: number;
  column: number;
}

export interface LoadedFile {
  path: string;
  /** What the file declares (empty when it failed to parse). */
  objects: string[];
  views: string[];
}

export interface LoadResult {
  files: LoadedFile[];
  /** Present only when no file has an error. */
  declaration?: Declaration;
  diagnostics: LocatedDiagnostic[];
}

export interface ProjectLoadResult extends LoadResult {
  configPath: string;
  config?: ProjectConfig;
}

interface Parsed {
  doc?: Document;
  lineCounter: LineCounter;
  value?: unknown;
}

function located(file: string, parsed: Parsed | undefined, d: Diagnostic): LocatedDiagnostic {
  const pos: Position = parsed?.doc ? locate(parsed.doc, parsed.lineCounter, d.path, d.on) : { line: 1, column: 1 };
  return { ...d, file, line: pos.line, column: pos.column };
}

/** Parse one YAML file; syntax errors, alias bombs and oversized files become diagnostics. */
function parseFile(file: string, out: LocatedDiagnostic[]): Parsed | undefined {
  const lineCounter = new LineCounter();
  let text: string;
  try {
    const size = statSync(file).size;
    if (size > MAX_FILE_BYTES) {
      out.push({
        severity: 'error',
        code: 'SCHEMA_VALIDATION_FAILED',
        message: `File is ${(size / 1024 / 1024).toFixed(1)} MB; declaration files over ${MAX_FILE_BYTES / 1024 / 1024} MB are refused`,
        fix: 'Split the declaration into several files.',
        path: [],
        file,
        line: 1,
        column: 1,
      });
      return undefined;
    }
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    out.push({
      severity: 'error',
      code: 'SCHEMA_VALIDATION_FAILED',
      message: code === 'ENOENT' ? 'File not found' : `Cannot read the file (${code ?? (err as Error).message})`,
      path: [],
      file,
      line: 1,
      column: 1,
    });
    return undefined;
  }
  let doc: Document;
  try {
    doc = withPlainEnv(() => parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true, strict: true }));
  } catch (err) {
    out.push({ severity: 'error', code: 'SCHEMA_VALIDATION_FAILED', message: `Cannot read the YAML: ${(err as Error).message}`, path: [], file, line: 1, column: 1 });
    return undefined;
  }
  const parsed: Parsed = { doc, lineCounter };
  // yaml's composer recurses per nesting level and records each level's stack overflow
  // as its own error; one sentence says it better than thousands.
  const overflow = doc.errors.find((e) => /call stack/i.test(e.message));
  if (overflow) {
    const { line, col } = lineCounter.linePos(overflow.pos[0]);
    out.push({
      severity: 'error',
      code: 'SCHEMA_VALIDATION_FAILED',
      message: 'The YAML nests too deeply to read',
      path: [],
      file,
      line,
      column: col,
    });
    return { lineCounter };
  }
  const syntax = [...doc.errors, ...doc.warnings.map((w) => Object.assign(w, { warning: true }))];
  for (const e of syntax) {
    const { line, col } = lineCounter.linePos(e.pos[0]);
    out.push({
      severity: 'warning' in e ? 'warning' : 'error',
      code: 'SCHEMA_VALIDATION_FAILED',
      message: yamlMessage(e.code, e.message, text.slice(e.pos[0], e.pos[1])),
      path: [],
      file,
      line,
      column: col,
    });
  }
  // A duplicate key leaves a usable document (the first value is kept), so the rest of
  // the file is still checked; any other syntax error makes its content unreliable.
  if (doc.errors.some((e) => e.code !== 'DUPLICATE_KEY')) return { lineCounter };
  try {
    parsed.value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (err) {
    // yaml throws on an alias expansion beyond maxAliasCount (a "billion laughs" file).
    let offset = 0;
    visit(doc, {
      Alias(_, node) {
        offset = node.range?.[0] ?? 0;
        return visit.BREAK;
      },
    });
    const { line, col } = lineCounter.linePos(offset);
    const bomb = /alias/i.test((err as Error).message);
    out.push({
      severity: 'error',
      code: 'SCHEMA_VALIDATION_FAILED',
      message: bomb
        ? `Too many alias expansions (more than ${MAX_ALIAS_COUNT}): refusing a file that expands exponentially`
        : `Cannot read the YAML: ${(err as Error).message}`,
      path: [],
      file,
      line,
      column: col,
    });
    return { lineCounter };
  }
  return parsed;
}

/**
 * yaml 2's parser reads `process.env.LOG_TOKENS` once per token, and process.env is a
 * slow native lookup: on a 1,000-object declaration that is a third of the parse time.
 * During the (synchronous) parse, process.env is a plain copy; it is restored at once.
 */
function withPlainEnv<T>(fn: () => T): T {
  const real = process.env;
  process.env = { ...real };
  try {
    return fn();
  } finally {
    process.env = real;
  }
}

/** yaml's messages, reworded where they are terse, with the offending text. */
function yamlMessage(code: string, message: string, source: string): string {
  const snippet = source.trim().split('\n')[0]?.slice(0, 40) ?? '';
  switch (code) {
    case 'DUPLICATE_KEY':
      return `Key "${snippet}" appears twice in the same mapping`;
    case 'BAD_INDENT':
    case 'MISSING_CHAR':
    case 'UNEXPECTED_TOKEN':
    case 'BLOCK_AS_IMPLICIT_KEY':
      return `YAML syntax error: ${message.replace(/\.$/, '')}${snippet ? ` near "${snippet}"` : ''}`;
    case 'BAD_ALIAS':
      return `YAML alias refers to an anchor that is not defined: ${message}`;
    default:
      return `YAML syntax error: ${message}`;
  }
}

const TOP_KEYS = ['objects', 'views'] as const;

/**
 * Load declaration files given by path and merge them: objects and views from every file,
 * a name declared twice reported at the second place with the first named.
 */
export function loadDeclarationFiles(paths: readonly string[]): LoadResult {
  const diagnostics: LocatedDiagnostic[] = [];
  const files: LoadedFile[] = [];
  const merged: Declaration = { objects: {}, views: {} };
  const origin = { objects: new Map<string, number>(), views: new Map<string, number>() };
  const parsedFiles: (Parsed | undefined)[] = [];

  paths.forEach((file, index) => {
    const parsed = parseFile(file, diagnostics);
    parsedFiles.push(parsed);
    const loaded: LoadedFile = { path: file, objects: [], views: [] };
    files.push(loaded);
    const value = parsed?.value;
    if (!parsed?.doc || value === null || value === undefined) return;
    const at = (d: Diagnostic): void => {
      diagnostics.push(located(file, parsed, d));
    };
    if (!isPlainObject(value)) {
      at({ severity: 'error', code: 'SCHEMA_VALIDATION_FAILED', message: 'A declaration file must be a mapping with "objects" and/or "views"', path: [] });
      return;
    }
    for (const key of Object.keys(value)) {
      if ((TOP_KEYS as readonly string[]).includes(key)) continue;
      const suggestion = closest(key, TOP_KEYS);
      at({
        severity: 'error',
        code: 'SCHEMA_VALIDATION_FAILED',
        message: `A declaration file has an unknown top-level key "${key}"`,
        path: [key],
        on: 'key',
        fix: 'Top-level keys: objects, views.',
        ...(suggestion ? { suggestion } : {}),
      });
    }
    for (const kind of TOP_KEYS) {
      const section = value[kind];
      if (section === undefined || section === null) continue;
      if (!isPlainObject(section)) {
        at({ severity: 'error', code: 'SCHEMA_VALIDATION_FAILED', message: `"${kind}" must be a mapping of ${kind === 'objects' ? 'object' : 'view'} name to its fields`, path: [kind] });
        continue;
      }
      for (const [name, decl] of Object.entries(section)) {
        const first = origin[kind].get(name);
        if (first !== undefined) {
          const firstFile = paths[first]!;
          const pos = locate(parsedFiles[first]!.doc!, parsedFiles[first]!.lineCounter, [kind, name], 'key');
          at({
            severity: 'error',
            code: kind === 'objects' ? 'SCHEMA_DUPLICATE_OBJECT' : 'SCHEMA_DUPLICATE',
            message: `${kind === 'objects' ? 'Object' : 'View'} "${name}" is declared twice: also at ${displayPath(firstFile)}:${pos.line}:${pos.column}`,
            path: [kind, name],
            on: 'key',
          });
          continue;
        }
        origin[kind].set(name, index);
        (merged[kind] as Record<string, unknown>)[name] = decl;
        (kind === 'objects' ? loaded.objects : loaded.views).push(name);
      }
    }
  });

  const result = validateDeclaration(merged);
  for (const d of result.diagnostics) {
    const [kind, name] = d.path;
    const index = (kind === 'objects' || kind === 'views') && typeof name === 'string' ? origin[kind].get(name) : undefined;
    const fileIndex = index ?? 0;
    diagnostics.push(located(paths[fileIndex] ?? '', parsedFiles[fileIndex], d));
  }
  const out: LoadResult = { files, diagnostics };
  if (result.value && !hasErrors(diagnostics)) out.declaration = result.value;
  return out;
}

/** Paths in messages are relative to the working directory, as a terminal user reads them. */
export function displayPath(file: string, cwd: string = process.cwd()): string {
  const rel = relative(cwd, file);
  return rel.startsWith('..') || isAbsolute(rel) ? file : rel;
}

/**
 * Load a project: schemasync.yaml (checked against project.schema.json), then every
 * declaration file its `schema` names (a folder → every *.yaml/*.yml below it, or globs,
 * relative to the config file, sorted so the order and "declared twice" are stable).
 */
export function loadProjectSync(options: { configPath?: string; cwd?: string } = {}): ProjectLoadResult {
  const cwd = options.cwd ?? process.cwd();
  const configPath = resolve(cwd, options.configPath ?? DEFAULT_CONFIG);
  const diagnostics: LocatedDiagnostic[] = [];
  const parsed = parseFile(configPath, diagnostics);
  if (!parsed?.doc || diagnostics.some((d) => d.severity === 'error')) return { configPath, files: [], diagnostics };
  const raw = parsed.value ?? {};
  const problems: Diagnostic[] = isPlainObject(raw)
    ? translateAjvErrors(runSchema('project', raw), raw, { root: 'project' })
    : [{ severity: 'error', code: 'SCHEMA_VALIDATION_FAILED', message: 'schemasync.yaml must be a mapping with "source" and "schema"', path: [] }];
  for (const d of problems) diagnostics.push(located(configPath, parsed, d));
  if (hasErrors(diagnostics) || !isPlainObject(raw)) return { configPath, files: [], diagnostics };
  const config = { schema: 'schema', ...raw } as ProjectConfig;

  const base = dirname(configPath);
  const patterns = typeof config.schema === 'string' ? [config.schema] : config.schema;
  const found = new Set<string>();
  for (const pattern of patterns) {
    const abs = resolve(base, pattern);
    let isDir = false;
    try {
      isDir = statSync(abs).isDirectory();
    } catch {
      isDir = false;
    }
    const matches = isDir
      ? globSync(['**/*.yaml', '**/*.yml'], { cwd: abs, absolute: true, ignore: ['**/node_modules/**'] })
      : globSync([pattern], { cwd: base, absolute: true, ignore: ['**/node_modules/**'] });
    if (matches.length === 0) {
      const schemaPath: Path = typeof config.schema === 'string' ? ['schema'] : ['schema', patterns.indexOf(pattern)];
      diagnostics.push(
        located(configPath, parsed, {
          severity: 'error',
          code: 'SCHEMA_VALIDATION_FAILED',
          message: isDir ? `The schema folder "${pattern}" holds no .yaml or .yml files` : `No declaration files match "${pattern}"`,
          path: schemaPath,
        }),
      );
    }
    for (const m of matches) if (resolve(m) !== configPath) found.add(resolve(m));
  }
  const result = loadDeclarationFiles([...found].sort());
  const out: ProjectLoadResult = { configPath, config, files: result.files, diagnostics: [...diagnostics, ...result.diagnostics] };
  if (result.declaration && !hasErrors(out.diagnostics)) out.declaration = result.declaration;
  return out;
}

export async function loadProject(options: { configPath?: string; cwd?: string } = {}): Promise<ProjectLoadResult> {
  return loadProjectSync(options);
}

/** Sort located diagnostics by file, then line, then column: the order a reader scans. */
export function sortDiagnostics(list: LocatedDiagnostic[]): LocatedDiagnostic[] {
  return [...list].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line || a.column - b.column));
}

