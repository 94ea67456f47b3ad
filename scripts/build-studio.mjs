#!/usr/bin/env node
// Studio (contract.md §9) is plain ES modules: tsc compiles engine/studio/app/*.ts for the
// browser, and the page's static files are copied beside them into dist/studio, which the
// server serves at /_/. No bundler: the browser loads the modules as they are.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const out = join(root, 'dist', 'studio');
const build = join(root, 'dist', '.studio-build');
for (const dir of [out, build]) rmSync(dir, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', join(root, 'engine', 'studio', 'tsconfig.json')], { stdio: 'inherit' });
// The page imports engine/model for its types only; tsc emits those files too, and the
// browser never loads them, so only the page's own modules are kept.
const modules = join(build, 'studio', 'app');
for (const name of readdirSync(modules)) if (name.endsWith('.js')) copyFileSync(join(modules, name), join(out, name));
rmSync(build, { recursive: true, force: true });
const assets = join(root, 'engine', 'studio', 'public');
for (const name of readdirSync(assets)) copyFileSync(join(assets, name), join(out, name));
