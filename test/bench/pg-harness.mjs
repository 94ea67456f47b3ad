// The test suite's PostgreSQL cluster starter (test/support/postgres.ts, TypeScript), transpiled
// for a plain Node bench process, with the module it imports beside it (as .mjs: the temp folder
// has no package.json saying ESM). Shared by the benches that run on PostgreSQL.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

const root = join(import.meta.dirname, '..', '..');

/** `startPostgres` of test/support/postgres.ts, its files written into `work`. */
export async function loadHarness(work) {
  const transpile = (name, as) => {
    const source = readFileSync(join(root, 'test', 'support', `${name}.ts`), 'utf8').replace("from './port.js'", "from './port.mjs'");
    const out = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } });
    writeFileSync(join(work, as), out.outputText);
  };
  transpile('port', 'port.mjs');
  transpile('postgres', 'postgres-harness.mjs');
  return import(join(work, 'postgres-harness.mjs'));
}
