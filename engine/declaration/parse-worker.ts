import { parentPort, workerData } from 'node:worker_threads';
import { parseFile, type LocatedDiagnostic } from './parse-file.js';

/**
 * A worker that parses some of a large project's files (load.ts spreads them over the
 * cores). It sends back values and syntax diagnostics, not documents: positions of later
 * diagnostics are found by re-parsing just the files that have one.
 */
const files = (workerData as { files: string[] }).files;
const results = files.map((file) => {
  const diagnostics: LocatedDiagnostic[] = [];
  const parsed = parseFile(file, diagnostics);
  return { file, usable: parsed.usable, value: parsed.value, diagnostics };
});
parentPort?.postMessage(results);
