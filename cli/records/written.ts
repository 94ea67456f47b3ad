import type { SourceRow } from './read.js';

/** Lines `from`–`to` of the file (1-based, both included). */
export interface LineRange {
  from: number;
  to: number;
}

/** A run of rows with consecutive places in the file (`seq`), and the lines it spans. */
interface Run {
  first: number;
  last: number;
  from: number;
  to: number;
}

/**
 * Which lines of an import file are in the store (issue 17; a failure must say precisely
 * which line ranges were written and which were not). importer.ts keeps several batches in
 * flight, so batches settle in any order, and a refused batch can sit between two written
 * ones. Each settled batch adds its rows here; the runs are joined in file order only when
 * asked. A run breaks where a row is missing (refused by the CLI, or by the server under
 * `--on-error skip`), so a range never spans a row that is not in the store. Memory: one
 * run per batch in the usual import (a few per batch with `skip`), never one per row.
 */
export class LineLedger {
  private readonly runs: Run[] = [];

  add(rows: readonly SourceRow[]): void {
    let run: Run | undefined;
    for (const r of rows) {
      if (run !== undefined && r.seq === run.last + 1) {
        run.last = r.seq;
        run.to = r.line;
        continue;
      }
      run = { first: r.seq, last: r.seq, from: r.line, to: r.line };
      this.runs.push(run);
    }
  }

  ranges(): LineRange[] {
    const sorted = [...this.runs].sort((a, b) => a.first - b.first);
    const out: (LineRange & { last: number })[] = [];
    for (const r of sorted) {
      const prev = out[out.length - 1];
      if (prev !== undefined && r.first === prev.last + 1) {
        prev.last = r.last;
        prev.to = r.to;
      } else {
        out.push({ from: r.from, to: r.to, last: r.last });
      }
    }
    return out.map(({ from, to }) => ({ from, to }));
  }
}

/** `line 7`, `lines 1–2000`, `lines 1–2000, 3001–4000 and 5001–5200`. */
export function linesText(ranges: readonly LineRange[]): string {
  const one = (r: LineRange) => (r.from === r.to ? `${r.from}` : `${r.from}–${r.to}`);
  const parts = ranges.map(one);
  const word = ranges.length === 1 && ranges[0]!.from === ranges[0]!.to ? 'line' : 'lines';
  const list = parts.length <= 1 ? parts.join('') : `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}`;
  return `${word} ${list}`;
}

/**
 * The lines from `firstLine` (a CSV's first row is line 2: its header is line 1) up to
 * `lastLine` that no range covers: between the written ranges, and after the last one.
 * `lastLine` is the last line the import read (rows after it were never read).
 */
export function gapsOf(written: readonly LineRange[], lastLine: number, firstLine = 1): LineRange[] {
  const gaps: LineRange[] = [];
  let next = firstLine;
  for (const r of written) {
    if (r.from > next) gaps.push({ from: next, to: r.from - 1 });
    next = Math.max(next, r.to + 1);
  }
  if (lastLine >= next) gaps.push({ from: next, to: lastLine });
  return gaps;
}
