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
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', join(root, 'engine', 'studio', 'tsconfig.json')], { stdio: 'inherit' });
const assets = join(root, 'engine', 'studio', 'public');
for (const name of readdirSync(assets)) copyFileSync(join(assets, name), join(out, name));
