import { watch, type FSWatcher } from 'chokidar';
import { statSync } from 'node:fs';
import { basename, dirname, isAbsolute, relative, resolve, sep } from 'node:path';

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
  /** Folders never watched even inside a target (dev's SQLite data folder). */
  ignoredPaths?: string[];
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

/** `path` is `folder` or below it. */
function within(folder: string, path: string): boolean {
  const rel = relative(folder, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/**
 * The folders chokidar is pointed at. Not the targets themselves: chokidar does not
 * re-attach to a watched path that is removed and created again (rm -rf + mkdir, mv away
 * and back, a checkout that empties the folder, an editor deleting and rewriting
 * schemasync.yaml), so every later save would go unseen. Watching the folder that holds
 * schemasync.yaml sees a target come back as an ordinary new entry. A target outside it
 * (`../shared/schema`) is watched through its parent folder.
 */
export function watchRoots(targets: WatchTargets): string[] {
  const root = dirname(targets.configPath);
  const roots = new Set<string>([root]);
  for (const p of targets.paths) roots.add(within(root, p) ? root : dirname(p));
  const all = [...roots];
  return all.filter((r) => !all.some((other) => other !== r && within(other, r))).sort();
}

/**
 * Whether the watcher looks at `path` at all: a target, a file or folder below a target,
 * or a folder on the way down to one. Everything else under the roots (node_modules,
 * build output, the server's data folder) is never watched, so watching the project
 * folder costs no more than watching the targets did.
 */
export function isWatchedPath(path: string, targets: WatchTargets, ignoredPaths: readonly string[] = []): boolean {
  const abs = resolve(path);
  if (IGNORED_DIRS.has(basename(abs)) || isEditorTempFile(abs)) return false;
  if (ignoredPaths.some((p) => within(p, abs))) return false;
  if (abs === targets.configPath || within(abs, targets.configPath)) return true;
  return targets.paths.some((t) => within(t, abs) || within(abs, t));
}

/** chokidar's own throttle of repeated change events on one file (index.js `_throttle(EV.CHANGE, path, 50)`). */
const CHOKIDAR_CHANGE_THROTTLE_MS = 50;

export function startWatcher(options: WatcherOptions): Watcher {
  let targets = options.targets;
  const ignoredPaths = (options.ignoredPaths ?? []).map((p) => resolve(p));
  let roots = watchRoots(targets);
  const fsw: FSWatcher = watch(roots, {
    ignoreInitial: true,
    // An atomic save (write temp, rename over) arrives as add/change of the real file;
    // chokidar's `atomic` would hold unlinks back 100 ms to merge them, which the
    // debounce already does, so it only added latency.
    atomic: false,
    // Not needed: a half-written file fails to parse, and the write that completes it is
    // another event, so the next run sees the whole file. awaitWriteFinish would add its
    // stability threshold (≥ 50 ms of polling) to every save.
    awaitWriteFinish: false,
    // Reads `targets` at call time, so setTargets re-points it.
    ignored: (path: string) => !isWatchedPath(path, targets, ignoredPaths),
  });
  const emit = (kind: WatchEventKind) => (path: string) => {
    if (kind === 'addDir') return; // a new folder brings no declaration until a file lands in it
    // Folders on the way to a target are watched, but only what is inside a target counts.
    const abs = resolve(path);
    const counts = abs === targets.configPath || targets.paths.some((t) => within(t, abs));
    if (!counts || !isWatchedPath(abs, targets, ignoredPaths)) return;
    if (kind !== 'unlinkDir' && !isDeclarationPath(abs, targets.configPath)) return;
    options.onEvent({ kind, path: abs });
  };
  // chokidar drops a file's change events for 50 ms after one it reported (leading edge
  // only, no trailing event), so a save landing in that window after the run already read
  // the file would go unseen until the next save. Each reported file is looked at again
  // once the window has passed; if it changed meanwhile, that is reported as a change.
  const trailing = new Map<string, ReturnType<typeof setTimeout>>();
  // Through the same filter as chokidar's own events: the targets may have moved meanwhile.
  const reportChange = emit('change');
  const fingerprint = (path: string): string | undefined => {
    try {
      const st = statSync(path);
      return `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
    } catch {
      return undefined; // gone: its unlink event tells
    }
  };
  const recheck = (path: string, seen: string | undefined): void => {
    clearTimeout(trailing.get(path));
    const timer = setTimeout(() => {
      trailing.delete(path);
      const now = fingerprint(path);
      if (now === undefined || now === seen) return;
      reportChange(path);
      recheck(path, now);
    }, CHOKIDAR_CHANGE_THROTTLE_MS + 10);
    timer.unref?.();
    trailing.set(path, timer);
  };
  for (const kind of ['add', 'change', 'unlink', 'unlinkDir'] as const) {
    const report = emit(kind);
    fsw.on(kind, (path: string) => {
      report(path);
      if (kind === 'add' || kind === 'change') {
        const abs = resolve(path);
        if (isWatchedPath(abs, targets, ignoredPaths) && isDeclarationPath(abs, targets.configPath)) recheck(abs, fingerprint(abs));
      }
    });
  }
  fsw.on('error', (err) => options.onError?.(err));
  const ready = new Promise<void>((r) => fsw.once('ready', () => r()));
  return {
    ready,
    setTargets(next) {
      const before = new Set(targets.paths);
      targets = next;
      // A new target under a folder already scanned was skipped by the filter then: add it
      // so chokidar reads it now. Nothing is unwatched — chokidar's unwatch ignores a path
      // and everything below it for good, which would hide a target nested in an old one;
      // the filter in emit drops whatever an old target still reports.
      const nextRoots = watchRoots(next);
      const added = [...nextRoots.filter((r) => !roots.includes(r)), ...next.paths.filter((p) => !before.has(p))];
      roots = nextRoots;
      if (added.length) fsw.add(added);
    },
    close: () => {
      for (const t of trailing.values()) clearTimeout(t);
      trailing.clear();
      return fsw.close();
    },
  };
}
