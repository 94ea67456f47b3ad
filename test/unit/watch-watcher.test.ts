import { mkdirSync, mkdtempSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isDeclarationPath, isEditorTempFile, startWatcher, staticBase, watchRoots, watchTargets, type WatchEvent, type Watcher } from '../../engine/watch/watcher.js';

let dirs: string[] = [];
let watchers: Watcher[] = [];
afterEach(async () => {
  await Promise.all(watchers.map((w) => w.close()));
  watchers = [];
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});

function project(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ss-watch-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'schemasync.yaml'), 'source: crm\nschema: schema\n');
  mkdirSync(join(dir, 'schema'));
  writeFileSync(join(dir, 'schema', 'a.yaml'), 'objects: {}\n');
  return dir;
}

/** Collects events; `until` waits (by polling, no timing assertion) for one that matches. */
async function watching(dir: string, schema: string | string[] = 'schema', ignoredPaths?: string[]) {
  const events: WatchEvent[] = [];
  const w = startWatcher({
    targets: watchTargets(join(dir, 'schemasync.yaml'), schema),
    onEvent: (e) => events.push(e),
    ...(ignoredPaths ? { ignoredPaths } : {}),
  });
  watchers.push(w);
  await w.ready;
  const until = async (pred: (e: WatchEvent) => boolean, what: string) => {
    for (let i = 0; i < 400; i++) {
      if (events.some(pred)) return;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`no event: ${what}; saw ${JSON.stringify(events)}`);
  };
  return { events, until, watcher: w };
}

describe('watch targets', () => {
  it('watches the config and the static base of each glob', () => {
    expect(staticBase('schema')).toBe('schema');
    expect(staticBase('schema/**/*.yaml')).toBe('schema');
    expect(staticBase('decl/*.yml')).toBe('decl');
    expect(staticBase('*.yaml')).toBe('.');
    const t = watchTargets('/p/schemasync.yaml', ['schema/**/*.yaml', 'extra/x.yaml']);
    expect(t.paths).toEqual(['/p/extra/x.yaml', '/p/schema', '/p/schemasync.yaml']);
  });

  it('knows editor scratch files', () => {
    for (const f of ['.a.yaml.swp', 'a.yaml~', '#a.yaml#', '.#a.yaml', '4913', 'a.yaml.tmp', 'a.yaml.123.tmp']) {
      expect(isEditorTempFile(`/p/schema/${f}`), f).toBe(true);
    }
    expect(isEditorTempFile('/p/schema/a.yaml')).toBe(false);
  });

  it('a declaration whose name contains .tmp is still a declaration', () => {
    for (const f of ['app.tmp.yaml', 'app.tmp.yml', 'app.tmp-v2.yaml', 'x.TMP.YAML']) {
      expect(isEditorTempFile(`/p/schema/${f}`), f).toBe(false);
      expect(isDeclarationPath(`/p/schema/${f}`, '/p/schemasync.yaml'), f).toBe(true);
    }
    // The atomic-save temporaries that sit beside them stay ignored.
    for (const f of ['app.yaml.tmp', 'app.yaml.tmp-1234', 'app.tmp.1a2b', 'app.yaml___jb_tmp___']) {
      expect(isEditorTempFile(`/p/schema/${f}`), f).toBe(true);
    }
  });
});

describe('watcher (real file-system events)', () => {
  it('sees a change, a new file and a deleted file', async () => {
    const dir = project();
    const { until } = await watching(dir);
    writeFileSync(join(dir, 'schema', 'a.yaml'), 'objects: { x: { attributes: {} } }\n');
    await until((e) => e.kind === 'change' && e.path.endsWith('a.yaml'), 'change a.yaml');
    writeFileSync(join(dir, 'schema', 'b.yml'), 'objects: {}\n');
    await until((e) => e.kind === 'add' && e.path.endsWith('b.yml'), 'add b.yml');
    unlinkSync(join(dir, 'schema', 'b.yml'));
    await until((e) => e.kind === 'unlink' && e.path.endsWith('b.yml'), 'unlink b.yml');
  });

  it('sees an atomic save (write a temp file, rename over) and ignores the temp file', async () => {
    const dir = project();
    const { events, until } = await watching(dir);
    const tmp = join(dir, 'schema', 'a.yaml.4242.tmp');
    writeFileSync(tmp, 'objects: { y: { attributes: {} } }\n');
    renameSync(tmp, join(dir, 'schema', 'a.yaml'));
    await until((e) => e.path.endsWith('/a.yaml') && (e.kind === 'change' || e.kind === 'add'), 'a.yaml after rename');
    expect(events.some((e) => e.path.endsWith('.tmp'))).toBe(false);
  });

  it('sees schemasync.yaml and ignores non-YAML files and swap files', async () => {
    const dir = project();
    const { events, until } = await watching(dir);
    writeFileSync(join(dir, 'schema', 'notes.txt'), 'x');
    writeFileSync(join(dir, 'schema', '.a.yaml.swp'), 'x');
    writeFileSync(join(dir, 'schemasync.yaml'), 'source: crm\nschema: schema\n# edited\n');
    await until((e) => e.path.endsWith('schemasync.yaml'), 'config change');
    expect(events.filter((e) => e.path.endsWith('.txt') || e.path.endsWith('.swp'))).toEqual([]);
  });

  it('follows globs and files in new subfolders', async () => {
    const dir = project();
    const { until } = await watching(dir, ['schema/**/*.yaml']);
    mkdirSync(join(dir, 'schema', 'sub'));
    writeFileSync(join(dir, 'schema', 'sub', 'c.yaml'), 'objects: {}\n');
    await until((e) => e.kind === 'add' && e.path.endsWith('sub/c.yaml'), 'add sub/c.yaml');
  });

  // chokidar does not re-attach to a watched path that is removed and created again: these
  // are the rm -rf / mv-away-and-back / git checkout and "editor rewrote the config" cases.
  it('reports a second save that chokidar swallows (within its 50 ms of the first)', async () => {
    const dir = project();
    const file = join(dir, 'schema', 'a.yaml');
    const w = await watching(dir);
    writeFileSync(file, 'objects: { a: { attributes: {} } }\n');
    await w.until((e) => e.path === file, 'first save');
    // Right after the first report: chokidar throttles this one away (leading edge only).
    writeFileSync(file, 'objects: { b: { attributes: {} } }\n');
    const seen = w.events.length;
    for (let i = 0; i < 100 && w.events.length === seen; i++) await new Promise((r) => setTimeout(r, 10));
    expect(w.events.slice(seen).some((e) => e.path === file && e.kind === 'change')).toBe(true);
  });

  it('sees saves in a schema folder that was removed and created again', async () => {
    const dir = project();
    const { events, until } = await watching(dir);
    rmSync(join(dir, 'schema'), { recursive: true });
    await until((e) => e.kind === 'unlinkDir' && e.path === join(dir, 'schema'), 'unlinkDir schema');
    mkdirSync(join(dir, 'schema'));
    writeFileSync(join(dir, 'schema', 'a.yaml'), 'objects: { x: { attributes: {} } }\n');
    await until((e) => e.kind === 'add' && e.path === join(dir, 'schema', 'a.yaml'), 'add a.yaml in the new folder');
    events.length = 0;
    writeFileSync(join(dir, 'schema', 'a.yaml'), 'objects: { y: { attributes: {} } }\n');
    await until((e) => e.path === join(dir, 'schema', 'a.yaml'), 'a later save of a.yaml');
  });

  it('sees saves in a schema folder moved away and back', async () => {
    const dir = project();
    const { events, until } = await watching(dir);
    renameSync(join(dir, 'schema'), join(dir, 'schema-away'));
    await until((e) => e.kind === 'unlinkDir' && e.path === join(dir, 'schema'), 'unlinkDir schema');
    renameSync(join(dir, 'schema-away'), join(dir, 'schema'));
    await new Promise((r) => setTimeout(r, 200));
    events.length = 0;
    writeFileSync(join(dir, 'schema', 'a.yaml'), 'objects: { y: { attributes: {} } }\n');
    await until((e) => e.path === join(dir, 'schema', 'a.yaml'), 'a save after the move back');
  });

  it('sees edits of schemasync.yaml after it was deleted and created again', async () => {
    const dir = project();
    const config = join(dir, 'schemasync.yaml');
    const { events, until } = await watching(dir);
    unlinkSync(config);
    await until((e) => e.kind === 'unlink' && e.path === config, 'unlink config');
    writeFileSync(config, 'source: crm\nschema: schema\n');
    await until((e) => e.kind === 'add' && e.path === config, 'config created again');
    events.length = 0;
    writeFileSync(config, 'source: crm\nschema: [schema, more]\n');
    await until((e) => e.kind === 'change' && e.path === config, 'a later edit of the config');
  });

  it('follows a new target named after start, and a target folder created later', async () => {
    const dir = project();
    // `more` exists from the start, so the first scan passed it over as no target.
    mkdirSync(join(dir, 'more'));
    writeFileSync(join(dir, 'more', 'm.yaml'), 'objects: {}\n');
    const { until, watcher } = await watching(dir);
    watcher.setTargets(watchTargets(join(dir, 'schemasync.yaml'), ['schema', 'more', 'later']));
    // setTargets does not say when chokidar has read the new folder: save until it is seen.
    for (let i = 0; ; i++) {
      writeFileSync(join(dir, 'more', 'm.yaml'), `objects: { m${i}: { attributes: {} } }\n`);
      try {
        await until((e) => e.path === join(dir, 'more', 'm.yaml'), 'save in the new target');
        break;
      } catch (err) {
        if (i === 3) throw err;
      }
    }
    mkdirSync(join(dir, 'later'));
    writeFileSync(join(dir, 'later', 'l.yaml'), 'objects: {}\n');
    await until((e) => e.kind === 'add' && e.path === join(dir, 'later', 'l.yaml'), 'file in a target created later');
  });

  it('stays out of the data folder, node_modules and folders that are no target', async () => {
    const dir = project();
    // A glob at the root makes the whole project folder a target: the data folder must
    // still be left alone, whatever it is called.
    const data = join(dir, 'data-dir');
    mkdirSync(data);
    mkdirSync(join(dir, '.schemasync'));
    mkdirSync(join(dir, 'node_modules'));
    const { events, until } = await watching(dir, ['*.yaml', 'schema'], [data]);
    writeFileSync(join(data, 'x.yaml'), 'objects: {}\n');
    writeFileSync(join(data, 'db.sqlite-wal'), 'x');
    writeFileSync(join(dir, '.schemasync', 'y.yaml'), 'objects: {}\n');
    writeFileSync(join(dir, 'node_modules', 'z.yaml'), 'objects: {}\n');
    writeFileSync(join(dir, 'schema', 'a.yaml'), 'objects: { x: { attributes: {} } }\n');
    await until((e) => e.path === join(dir, 'schema', 'a.yaml'), 'save of a.yaml');
    await new Promise((r) => setTimeout(r, 200));
    expect(events.filter((e) => !e.path.startsWith(join(dir, 'schema')))).toEqual([]);
  });

  it('does not report files beside the targets', async () => {
    const dir = project();
    mkdirSync(join(dir, 'other'));
    const { events, until } = await watching(dir);
    writeFileSync(join(dir, 'other', 'o.yaml'), 'objects: {}\n');
    writeFileSync(join(dir, 'docker-compose.yaml'), 'x: 1\n');
    writeFileSync(join(dir, 'schema', 'a.yaml'), 'objects: { x: { attributes: {} } }\n');
    await until((e) => e.path === join(dir, 'schema', 'a.yaml'), 'save of a.yaml');
    await new Promise((r) => setTimeout(r, 200));
    expect(events.map((e) => e.path)).toEqual([join(dir, 'schema', 'a.yaml')]);
  });

  it('a file that stopped being a target is not reported by its trailing re-check', async () => {
    const dir = project();
    mkdirSync(join(dir, 'other'));
    const file = join(dir, 'schema', 'a.yaml');
    const { events, until, watcher } = await watching(dir);
    writeFileSync(file, 'objects: { a: { attributes: {} } }\n');
    await until((e) => e.path === file, 'first save');
    // schemasync.yaml now names another folder; a.yaml's re-check is still pending.
    watcher.setTargets(watchTargets(join(dir, 'schemasync.yaml'), 'other'));
    const seen = events.length;
    writeFileSync(file, 'objects: { b: { attributes: {} } }\n');
    await new Promise((r) => setTimeout(r, 250));
    expect(events.slice(seen).filter((e) => e.path === file)).toEqual([]);
  });

  it('watches the folder holding schemasync.yaml, and the parent of a target outside it', () => {
    expect(watchRoots(watchTargets('/p/schemasync.yaml', ['schema/**/*.yaml', 'deep/er/x']))).toEqual(['/p']);
    expect(watchRoots(watchTargets('/p/app/schemasync.yaml', ['schema', '../shared/decl']))).toEqual(['/p/app', '/p/shared']);
    expect(watchRoots(watchTargets('/p/app/schemasync.yaml', ['..']))).toEqual(['/']);
  });
});
