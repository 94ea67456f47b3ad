import { createRequire } from 'node:module';
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
