#!/usr/bin/env node
// `npm run build` starts from an empty dist/, so nothing an older build emitted (source
// maps the package does not ship the sources for, files of modules since removed) can be
// packed or loaded.
import { rmSync } from 'node:fs';

rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
