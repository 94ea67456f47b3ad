import { parentPort } from 'node:worker_threads';
import { parseFile, type LocatedDiagnostic } from './parse-file.js';

/**
 * A worker that parses some of a large project's files (load.ts spreads them over the
 * cores). It may start before the files are known (parse-pool.ts), so they arrive as a
 * message. It sends back values and syntax diagnostics, not documents: positions of later
 * diagnostics are found by re-parsing just the files that have one.
 */
parentPort?.once('message', ({ files }: { files: string[] }) => {
  const results = files.map((file) => {
    const diagnostics: LocatedDiagnostic[] = [];
    const parsed = parseFile(file, diagnostics);
    return { file, usable: parsed.usable, value: parsed.value, diagnostics };
  });
  parentPort?.postMessage(results);
  parentPort?.close();
});
