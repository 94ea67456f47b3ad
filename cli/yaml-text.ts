import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { relative } from 'node:path';
import { CliError } from './errors.js';
import type * as Yaml from 'yaml';

const require = createRequire(import.meta.url);

/**
 * YAML.parse, the library loaded on first use. Loading it costs ~35 ms of CPU, and the
 * instance lookup (instance.ts, target.ts) runs for every command, even one that finds no
 * schemasync.yaml — `records import --base-url … --api-key …` reads none, and its start is
 * part of every import's time (issue 17 "Performance"). The same module instance as an
 * `import` of it (the package's Node entry is CommonJS, shared by both).
 */
export function parseYaml(text: string): unknown {
  return (require('yaml') as typeof Yaml).parse(text);
}

/**
 * The project file (schemasync.yaml) as YAML, for the instance and target lookups that run
 * before any command's own loading: undefined when there is none; a file that is not YAML is
 * refused here, at its line and column, since nothing else can be read from it (it was
 * taken for an absent one, and a command then said no instance was configured).
 */
export function readConfigYaml(configPath: string): unknown {
  if (!existsSync(configPath)) return undefined;
  const text = readFileSync(configPath, 'utf8');
  try {
    return parseYaml(text);
  } catch (err) {
    const e = err as { message?: string; linePos?: { line: number; col: number }[] };
    const at = e.linePos?.[0];
    const where = `${relative(process.cwd(), configPath) || configPath}${at ? `:${at.line}:${at.col}` : ''}`;
    const what = (e.message ?? String(err)).split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
    throw new CliError(`${where} YAML syntax error: ${what}`, { hint: 'schemasync validate lists every problem of the project' });
  }
}
