import { watch, type FSWatcher } from 'chokidar';
import { basename, dirname, isAbsolute, resolve, sep } from 'node:path';

/**
 * What to watch for a project (contract.md §2): schemasync.yaml itself and the
 * declaration files its `schema` names — a folder (every *.yaml/*.yml below it) or a list
 * of globs. chokidar 5 takes no globs, so a glob is watched through its static base
 * folder and events are kept when they are YAML; loadProject expands the globs again on
 * every run, so an extra event costs at most one no-change sync.
 */
export interface WatchTargets {
  configPath: string;
  /** Folders and files to watch (absolute). */
  paths: string[];
}

export function watchTargets(configPath: string, schema: string | string[] | undefined): WatchTargets {
  const root = dirname(resolve(configPath));
  const paths = new Set<string>([resolve(configPath)]);
  const entries = schema === undefined ? ['schema'] : Array.isArray(schema) ? schema : [schema];
  for (const entry of entries) paths.add(resolve(root, staticBase(entry)));
  return { configPath: resolve(configPath), paths: [...paths].sort() };
}

/** The part of a glob before its first magic segment (`schema/**\/*.yaml` → `schema`). */
export function staticBase(pattern: string): string {
  const segments = pattern.split(/[\\/]/);
  const kept: string[] = [];
  for (const s of segments) {
    if (/[*?[\]{}()!]/.test(s)) break;
    kept.push(s);
  }
  if (kept.length === segments.length) return pattern; // no magic: a folder or a file
  const base = kept.join('/');
  if (base === '') return isAbsolute(pattern) ? sep : '.';
  return base;
}

/**
 * Editors' scratch files: vim swap files and its `4913` probe, backups ending in `~`,
 * emacs `#autosave#` and `.#lock` files, and the temp files of atomic saves. They are
 * never declarations; reacting to them would sync half-saved states. The loose
 * `.tmp<suffix>` pattern (`a.yaml.tmp-123`, `a.tmp.1a2b`) stops short of names ending in
 * .yaml/.yml: `schema/app.tmp.yaml` is a declaration someone named so, and ignoring it
 * would silently leave its objects unsynced.
 */
export function isEditorTempFile(path: string): boolean {
  const name = basename(path);
  return (
    /\.(sw[a-p]|swx|tmp|temp|bak|orig|crswap)$/i.test(name) ||
    name.endsWith('~') ||
    /^#.*#$/.test(name) ||
    name.startsWith('.#') ||
    name === '4913' ||
    (/\.tmp[.-]?\w*$/i.test(name) && !/\.ya?ml$/i.test(name)) ||
    /___jb_(tmp|old)___$/.test(name) ||
    /\.\d+\.tmp$/.test(name)
  );
}

const IGNORED_DIRS = new Set(['node_modules', '.git', '.schemasync', '.hg', '.svn']);

export type WatchEventKind = 'add' | 'change' | 'unlink' | 'addDir' | 'unlinkDir';

export interface WatchEvent {
  kind: WatchEventKind;
  path: string;
}

export interface WatcherOptions {
  targets: WatchTargets;
  onEvent: (event: WatchEvent) => void;
  onError?: (err: unknown) => void;
}

export interface Watcher {
  /** Resolves once the initial scan is done and events will be seen. */
  ready: Promise<void>;
  /** Re-point the watcher after schemasync.yaml changed its `schema`. */
  setTargets(targets: WatchTargets): void;
  close(): Promise<void>;
}

export function isDeclarationPath(path: string, configPath: string): boolean {
  if (resolve(path) === configPath) return true;
  return /\.ya?ml$/i.test(path) && !isEditorTempFile(path);
}

export function startWatcher(options: WatcherOptions): Watcher {
  let targets = options.targets;
  const fsw: FSWatcher = watch(targets.paths, {
    ignoreInitial: true,
    // An atomic save (write temp, rename over) arrives as add/change of the real file;
    // chokidar's `atomic` would hold unlinks back 100 ms to merge them, which the
    // debounce already does, so it only added latency.
    atomic: false,
    // Not needed: a half-written file fails to parse, and the write that completes it is
    // another event, so the next run sees the whole file. awaitWriteFinish would add its
    // stability threshold (≥ 50 ms of polling) to every save.
    awaitWriteFinish: false,
    ignored: (path: string) => {
      const name = basename(path);
      return IGNORED_DIRS.has(name) || isEditorTempFile(path);
    },
  });
  const emit = (kind: WatchEventKind) => (path: string) => {
    if (kind === 'addDir') return; // a new folder brings no declaration until a file lands in it
    if (kind !== 'unlinkDir' && !isDeclarationPath(path, targets.configPath)) return;
    options.onEvent({ kind, path: resolve(path) });
  };
  for (const kind of ['add', 'change', 'unlink', 'unlinkDir'] as const) fsw.on(kind, emit(kind));
  fsw.on('error', (err) => options.onError?.(err));
  const ready = new Promise<void>((r) => fsw.once('ready', () => r()));
  return {
    ready,
    setTargets(next) {
      const before = new Set(targets.paths);
      const after = new Set(next.paths);
      const gone = [...before].filter((p) => !after.has(p));
      const added = [...after].filter((p) => !before.has(p));
      targets = next;
      if (gone.length) fsw.unwatch(gone);
      if (added.length) fsw.add(added);
    },
    close: () => fsw.close(),
  };
}
