#!/usr/bin/env node
// The layering rules of architecture.md that the type checker cannot see:
// engine/ never imports cli/; routes never contain SQL; the CLI reaches a server only
// through the SDK (never the store directly, except `serve`/`dev`, which host one); Studio
// stays in its folder and never parses strings as HTML.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const files = (dir) =>
  readdirSync(join(root, dir)).flatMap((name) => {
    const path = join(dir, name);
    return statSync(join(root, path)).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : [];
  });
const imports = (src) => [...src.matchAll(/(?:from|import\()\s*['"]([^'"]+)['"]/g)].map((m) => m[1]);

const problems = [];
for (const file of files('engine')) {
  const src = readFileSync(join(root, file), 'utf8');
  for (const spec of imports(src)) {
    if (/(^|\/)cli\//.test(spec)) problems.push(`${file}: engine/ must not import cli/ (${spec})`);
  }
  if (file.startsWith(join('engine', 'server', 'routes')) && /\b(SELECT|INSERT|UPDATE|DELETE)\s+(\*|INTO|FROM|\w+\s+SET)/.test(src)) {
    problems.push(`${file}: routes must not contain SQL; call the store`);
  }
}
// Studio (contract.md §9) uses only the public HTTP API: it imports nothing outside its own
// folder, and no server text may become markup (issue 20), so the HTML-parsing DOM calls
// are not used at all.
for (const file of files(join('engine', 'studio'))) {
  const src = readFileSync(join(root, file), 'utf8');
  // The wire shapes of engine/model may be imported as types (erased: no server code ships).
  const studioImports = [...src.matchAll(/^\s*((?:import|export)\b[^;]*?)\bfrom\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]/gm)].map((m) => ({ spec: m[2] ?? m[3], typeOnly: /^\s*(import|export) type\b/.test(m[1] ?? '') }));
  for (const { spec, typeOnly } of studioImports) {
    if (!/^\.\/[\w-]+\.js$/.test(spec) && !(typeOnly && /^\.\.\/\.\.\/model\/[\w-]+\.js$/.test(spec))) problems.push(`${file}: Studio imports only its own modules (${spec})`);
  }
  if (/\b(innerHTML|outerHTML|insertAdjacentHTML|document\.write|createContextualFragment|DOMParser)\b/.test(src)) {
    problems.push(`${file}: Studio builds DOM from text nodes only (no HTML parsing of strings)`);
  }
}
const hosts = new Set(['cli/commands/serve.ts', 'cli/commands/dev.ts']);
for (const file of files('cli')) {
  if (hosts.has(relative(root, join(root, file)))) continue;
  const src = readFileSync(join(root, file), 'utf8');
  for (const spec of imports(src)) {
    if (/engine\/store\//.test(spec)) problems.push(`${file}: the CLI reaches data only through the SDK (${spec})`);
  }
}
if (problems.length) {
  console.error(problems.join('\n'));
  process.exit(1);
}
console.log('boundaries ok');
