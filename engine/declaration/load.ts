import { statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { globSync } from 'tinyglobby';
import type { Declaration, ProjectConfig } from '../model/declaration.js';
import { runSchema } from './ajv.js';
import { translateAjvErrors } from './ajv-messages.js';
import { hasErrors, isPlainObject, type Diagnostic, type Path } from './diagnostic.js';
import { located, mb, parseFile, type LocatedDiagnostic, type Parsed } from './parse-file.js';
import { parseWorker, stopIdleWorker, workersAvailable } from './parse-pool.js';
import { closest } from './suggest.js';
import { protectDiagnostics } from './targets.js';
import { validateDeclaration } from './validate.js';

/**
 * Reading schemasync.yaml and the declaration files it names, keeping source positions
 * so every diagnostic says file:line:column (contract.md §2), and reporting every problem
 * of every file in one run.
 */
export { MAX_ALIAS_COUNT, MAX_FILE_BYTES, type LocatedDiagnostic } from './parse-file.js';
/**
 * Every declaration file together: a `schema` glob that sweeps up generated or vendored
 * YAML must not cost minutes. 32 MB is ten times the 1,000-object benchmark project.
 */
export const MAX_TOTAL_BYTES = 32 * 1024 * 1024;
export const DEFAULT_CONFIG = 'schemasync.yaml';
/** Below this many bytes in total, starting a worker costs more than it saves. */
const PARALLEL_MIN_BYTES = 512 * 1024;

export interface LoadedFile {
  path: string;
  /** What the file declares (empty when it failed to parse). */
  objects: string[];
  views: string[];
  roles: string[];
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

const TOP_KEYS = ['objects', 'views', 'roles'] as const;
const NOUN = { objects: 'Object', views: 'View', roles: 'Role' } as const;

/**
 * Load declaration files given by path and merge them: objects and views from every file,
 * a name declared twice reported at the second place with the first named.
 */
export function loadDeclarationFiles(paths: readonly string[]): LoadResult {
  const diagnostics: LocatedDiagnostic[] = [];
  const sizes = fileSizes(paths);
  if (overTotal(paths, sizes, diagnostics)) return refused(paths, diagnostics);
  const parsedFiles = paths.map((file) => parseFile(file, diagnostics));
  return mergeParsed(parsedFiles, diagnostics);
}

/** The same, parsing large sets of files on every core (worker threads). */
export async function loadDeclarationFilesParallel(paths: readonly string[]): Promise<LoadResult> {
  const diagnostics: LocatedDiagnostic[] = [];
  const sizes = fileSizes(paths);
  if (overTotal(paths, sizes, diagnostics)) return refused(paths, diagnostics);
  const parsedFiles = await parseParallel(paths, sizes, diagnostics);
  return mergeParsed(parsedFiles, diagnostics);
}

function fileSizes(paths: readonly string[]): number[] {
  return paths.map((p) => {
    try {
      return statSync(p).size;
    } catch {
      return 0; // parseFile reports the missing file
    }
  });
}

function overTotal(paths: readonly string[], sizes: number[], out: LocatedDiagnostic[]): boolean {
  const total = sizes.reduce((a, b) => a + b, 0);
  if (total <= MAX_TOTAL_BYTES) return false;
  out.push({
    severity: 'error',
    code: 'SCHEMA_VALIDATION_FAILED',
    message: `The ${paths.length} declaration files total ${mb(total)} MB; more than ${MAX_TOTAL_BYTES / 1024 / 1024} MB in one project is refused, so none was read`,
    fix: 'Check that `schema` in schemasync.yaml matches only declaration files (not generated or vendored YAML).',
    path: [],
    file: paths[sizes.indexOf(Math.max(...sizes))]!,
    line: 1,
    column: 1,
  });
  return true;
}

function refused(paths: readonly string[], diagnostics: LocatedDiagnostic[]): LoadResult {
  return { files: paths.map((path) => ({ path, objects: [], views: [], roles: [] })), diagnostics };
}

/**
 * Spread the files over the cores: the main thread parses one share while workers parse
 * the others. Small projects, and runs from TypeScript sources (tests), parse in-thread.
 */
async function parseParallel(paths: readonly string[], sizes: number[], diagnostics: LocatedDiagnostic[]): Promise<Parsed[]> {
  const total = sizes.reduce((a, b) => a + b, 0);
  const lanes = Math.min(availableParallelism(), paths.length);
  if (lanes < 2 || total < PARALLEL_MIN_BYTES || !workersAvailable()) {
    stopIdleWorker();
    return paths.map((file) => parseFile(file, diagnostics));
  }
  // Largest first into the lightest lane: shares of near-equal bytes.
  const shares: number[][] = Array.from({ length: lanes }, () => []);
  const load = new Array<number>(lanes).fill(0);
  for (const i of paths.map((_, i) => i).sort((a, b) => sizes[b]! - sizes[a]!)) {
    const lane = load.indexOf(Math.min(...load));
    shares[lane]!.push(i);
    load[lane]! += sizes[i]!;
  }
  type Result = { file: string; usable: boolean; value?: unknown; diagnostics: LocatedDiagnostic[] };
  const inWorker = shares.slice(1).map(
    (share) =>
      new Promise<Result[]>((resolvePromise, reject) => {
        const worker = parseWorker(share.map((i) => paths[i]!));
        worker.once('message', (m: Result[]) => resolvePromise(m));
        worker.once('error', reject);
        worker.once('exit', (code) => code !== 0 && reject(new Error(`parse worker exited with ${code}`)));
      }),
  );
  const out = new Array<Parsed>(paths.length);
  const mine: LocatedDiagnostic[] = [];
  for (const i of shares[0]!) out[i] = parseFile(paths[i]!, mine);
  // The workers started later (each loads yaml first), so this thread is usually done
  // before them: load (built) or compile (from sources) the declaration validator now rather than after they report.
  runSchema('declaration', {});
  let results: Result[][];
  try {
    results = await Promise.all(inWorker);
  } catch {
    // A worker that cannot start (a sandbox without threads, say) must not fail a
    // validation: parse its share here instead.
    results = shares.slice(1).map((share) =>
      share.map((i) => {
        const list: LocatedDiagnostic[] = [];
        const p = parseFile(paths[i]!, list);
        return { file: p.file, usable: p.usable, value: p.value, diagnostics: list };
      }),
    );
  }
  results.forEach((list, w) =>
    list.forEach((r, k) => {
      const p: Parsed = { file: r.file, usable: r.usable };
      if (r.value !== undefined) p.value = r.value;
      out[shares[w + 1]![k]!] = p;
      diagnostics.push(...r.diagnostics);
    }),
  );
  diagnostics.push(...mine);
  return out;
}

function mergeParsed(parsedFiles: Parsed[], diagnostics: LocatedDiagnostic[]): LoadResult {
  const files: LoadedFile[] = [];
  // Null-prototype maps: a name is only ever an own key. Assigning an object named
  // "__proto__" to a plain object would set its prototype instead, hiding that object from
  // the name rule and handing its contents to every lookup as inherited names (issue 21).
  const merged: Declaration = { objects: Object.create(null) as Declaration['objects'], views: Object.create(null) as Declaration['views'] };
  const origin = { objects: new Map<string, number>(), views: new Map<string, number>(), roles: new Map<string, number>() };

  parsedFiles.forEach((parsed, index) => {
    const file = parsed.file;
    const loaded: LoadedFile = { path: file, objects: [], views: [], roles: [] };
    files.push(loaded);
    const value = parsed.value;
    if (!parsed.usable || value === null || value === undefined) return;
    const at = (d: Diagnostic): void => {
      diagnostics.push(located(parsed, d));
    };
    if (!isPlainObject(value)) {
      at({ severity: 'error', code: 'SCHEMA_VALIDATION_FAILED', message: 'A declaration file must be a mapping with "objects", "views" and/or "roles"', path: [] });
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
        fix: 'Top-level keys: objects, views, roles.',
        ...(suggestion ? { suggestion } : {}),
      });
    }
    for (const kind of TOP_KEYS) {
      const section = value[kind];
      if (section === undefined || section === null) continue;
      if (!isPlainObject(section)) {
        at({ severity: 'error', code: 'SCHEMA_VALIDATION_FAILED', message: `"${kind}" must be a mapping of ${NOUN[kind].toLowerCase()} name to its fields`, path: [kind] });
        continue;
      }
      for (const [name, decl] of Object.entries(section)) {
        const first = origin[kind].get(name);
        if (first !== undefined) {
          const firstFile = parsedFiles[first]!.file;
          const pos = located(parsedFiles[first], { severity: 'error', message: '', path: [kind, name], on: 'key' });
          at({
            severity: 'error',
            code: kind === 'objects' ? 'SCHEMA_DUPLICATE_OBJECT' : 'SCHEMA_DUPLICATE',
            message: `${NOUN[kind]} "${name}" is declared twice: also at ${displayPath(firstFile)}:${pos.line}:${pos.column}`,
            path: [kind, name],
            on: 'key',
          });
          continue;
        }
        origin[kind].set(name, index);
        (merged[kind] ??= Object.create(null) as never)[name] = decl as never;
        loaded[kind].push(name);
      }
    }
  });

  const unreadable = parsedFiles.filter((p) => !p.usable).map((p) => displayPath(p.file));
  const result = validateDeclaration(merged, { unreadable });
  for (const d of result.diagnostics) {
    const [kind, name] = d.path;
    const index = (kind === 'objects' || kind === 'views' || kind === 'roles') && typeof name === 'string' ? origin[kind].get(name) : undefined;
    diagnostics.push(located(parsedFiles[index ?? 0], d));
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
  const project = readProject(options);
  if (!project.config) return project;
  return withFiles(project, loadDeclarationFiles(project.paths));
}

/** The same, parsing a large project's files on every core; what the CLI uses. */
export async function loadProject(options: { configPath?: string; cwd?: string } = {}): Promise<ProjectLoadResult> {
  const project = readProject(options);
  if (!project.config) return project;
  return withFiles(project, await loadDeclarationFilesParallel(project.paths));
}

function withFiles(project: ProjectLoadResult & { paths: string[]; parsed?: Parsed }, result: LoadResult): ProjectLoadResult {
  const { paths: _paths, parsed, ...rest } = project;
  const out: ProjectLoadResult = { ...rest, files: result.files, diagnostics: [...project.diagnostics, ...result.diagnostics] };
  if (result.declaration && !hasErrors(out.diagnostics)) {
    out.declaration = result.declaration;
    if (project.config) for (const d of protectDiagnostics(project.config, result.declaration)) out.diagnostics.push(located(parsed, d));
  }
  return out;
}

function readProject(options: { configPath?: string; cwd?: string }): ProjectLoadResult & { paths: string[]; parsed?: Parsed } {
  const cwd = options.cwd ?? process.cwd();
  const configPath = resolve(cwd, options.configPath ?? DEFAULT_CONFIG);
  const diagnostics: LocatedDiagnostic[] = [];
  const parsed = parseFile(configPath, diagnostics);
  if (!parsed.usable || diagnostics.some((d) => d.severity === 'error')) return { configPath, files: [], diagnostics, paths: [] };
  const raw = parsed.value ?? {};
  const problems: Diagnostic[] = isPlainObject(raw)
    ? translateAjvErrors(runSchema('project', raw), raw, { root: 'project' })
    : [{ severity: 'error', code: 'SCHEMA_VALIDATION_FAILED', message: 'schemasync.yaml must be a mapping with "source" and "schema"', path: [] }];
  for (const d of problems) diagnostics.push(located(parsed, d));
  if (hasErrors(diagnostics) || !isPlainObject(raw)) return { configPath, files: [], diagnostics, paths: [] };
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
        located(parsed, {
          severity: 'error',
          code: 'SCHEMA_VALIDATION_FAILED',
          message: isDir ? `The schema folder "${pattern}" holds no .yaml or .yml files` : `No declaration files match "${pattern}"`,
          path: schemaPath,
        }),
      );
    }
    for (const m of matches) if (resolve(m) !== configPath) found.add(resolve(m));
  }
  return { configPath, config, files: [], diagnostics, paths: [...found].sort(), parsed };
}

/** Sort located diagnostics by file, then line, then column: the order a reader scans. */
export function sortDiagnostics(list: LocatedDiagnostic[]): LocatedDiagnostic[] {
  return [...list].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line || a.column - b.column));
}

