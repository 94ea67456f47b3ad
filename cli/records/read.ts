import type { CsvError } from 'csv-parse';
import { extname } from 'node:path';
import type { Readable } from 'node:stream';
import { CliError } from '../errors.js';
import type { RecordShape, RowError } from './shape.js';

/**
 * The rows of an import file, read as a stream (issue 17: "never the whole file in
 * memory"): each row with its line number, its values converted to the attribute's type,
 * and the problems found so far. The caller pulls rows one at a time, so a slow server
 * stops the reading (backpressure through the async iterator).
 */
export interface SourceRow {
  /** 1-based line of the file where the row starts. */
  line: number;
  /** The row's place among the file's rows (0-based; blank lines and a CSV header not counted). */
  seq: number;
  /** The row as the file has it (an NDJSON line, a CSV record's cells): what idempotency keys hash. */
  text: string;
  /**
   * The row's values; undefined once the import has put a row with `json` in a batch to send:
   * a batch in flight then holds the line's text, not its parsed objects (they were most of
   * what every young-generation GC had to copy), and rowValues() parses it again when needed.
   */
  values: Record<string, unknown> | undefined;
  /**
   * `values` as JSON text when the file's own text is exactly that: an NDJSON line that
   * JSON.parse made into `values` itself (one JSON object, attribute names only). Sent as it
   * is, the server parses the very text the CLI parsed and checked, so it gets the same
   * values; the CLI skips serialising them again. Otherwise undefined.
   */
  json: string | undefined;
  errors: readonly RowError[];
}

/** The row's values, parsed again from its text if the import let them go (`values`). */
export function rowValues(row: SourceRow): Record<string, unknown> {
  return row.values ?? (JSON.parse(row.json!) as Record<string, unknown>);
}

export type ImportFormat = 'ndjson' | 'csv';

/** `.csv` → csv; `.ndjson`, `.jsonl`, `.json` → ndjson; otherwise --format must say. */
export function formatOf(explicit: string | undefined, file: string | undefined): ImportFormat {
  if (explicit !== undefined) {
    if (explicit === 'csv' || explicit === 'ndjson') return explicit;
    if (explicit === 'jsonl') return 'ndjson';
    throw new CliError(`--format must be ndjson or csv, got '${explicit}'`);
  }
  const ext = file === undefined ? '' : extname(file).toLowerCase();
  if (ext === '.csv') return 'csv';
  if (ext === '.ndjson' || ext === '.jsonl' || ext === '.json') return 'ndjson';
  throw new CliError(file === undefined || file === '-' ? 'Reading stdin: say which format it is with --format ndjson or --format csv' : `Cannot tell the format of ${file} from its extension: pass --format ndjson or --format csv`);
}

/** What the reader noticed about the file as a whole, for one line each on stderr. */
export interface ReadNotes {
  /** System columns/keys (id, created_at …) the file carries; their values are ignored. */
  ignored: Set<string>;
}

/**
 * The rows in runs: every row of one chunk of the file at once (NDJSON: a 64 KiB read, ~700
 * rows), so the import loop awaits once per chunk rather than once per row — a promise and a
 * turn of the async machinery per row were a fifth of the CLI's reading time.
 */
export function readRows(input: Readable, format: ImportFormat, shape: RecordShape, notes: ReadNotes): AsyncGenerator<SourceRow[]> {
  return format === 'csv' ? readCsv(input, shape, notes) : readNdjson(input, shape, notes);
}

/**
 * NDJSON lines: split at \n, \r\n or a lone \r, as node:readline splits them (so line numbers
 * are the ones an editor shows), but a chunk at a time. A chunk's strings are decoded by the
 * stream (setEncoding), which keeps a character split across two reads whole.
 */
async function* readNdjson(input: Readable, shape: RecordShape, notes: ReadNotes): AsyncGenerator<SourceRow[]> {
  input.setEncoding('utf8');
  const state = { line: 0, seq: 0 };
  let rest = '';
  for await (const chunk of input as AsyncIterable<string>) {
    const text = rest === '' ? chunk : rest + chunk;
    const rows: SourceRow[] = [];
    let start = 0;
    const nextBreak = breaksOf(text);
    // `rest` holds no line break but maybe a last \r: the search starts there, not at 0, so a
    // line longer than a chunk is not searched again with every chunk.
    for (let i = nextBreak(Math.max(0, rest.length - 1)); i !== -1; i = nextBreak(start)) {
      // A \r last in the chunk may be the first half of a \r\n: wait for the next chunk.
      if (text.charCodeAt(i) === 0x0d && i === text.length - 1) break;
      const row = ndjsonRow(text.slice(start, i), state, shape, notes);
      if (row) rows.push(row);
      start = text.charCodeAt(i) === 0x0d && text.charCodeAt(i + 1) === 0x0a ? i + 2 : i + 1;
    }
    rest = text.slice(start);
    if (rows.length > 0) yield rows;
  }
  if (rest !== '') {
    // The file's last line (no line break after it), or a lone \r at the very end.
    const last = rest.charCodeAt(rest.length - 1) === 0x0d ? rest.slice(0, -1) : rest;
    const row = ndjsonRow(last, state, shape, notes);
    if (row) yield [row];
  }
}

/**
 * The index of the next \n or \r of `text` at or after `from` (ascending calls), or -1. The
 * next \r is remembered while it lies ahead: a file of \n line ends has none, and searching
 * for it at every line would scan to the chunk's end each time.
 */
function breaksOf(text: string): (from: number) => number {
  let r = -2;
  return (from) => {
    if (r !== -1 && r < from) r = text.indexOf('\r', from);
    const n = text.indexOf('\n', from);
    return r === -1 || (n !== -1 && n < r) ? n : r;
  };
}

/** One line as a row; undefined for a blank line (NDJSON allows them; they keep their number). */
function ndjsonRow(text: string, state: { line: number; seq: number }, shape: RecordShape, notes: ReadNotes): SourceRow | undefined {
  const line = ++state.line;
  if (isBlank(text)) return undefined;
  const seq = state.seq++;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return { line, seq, text, values: {}, json: undefined, errors: [{ message: `not a JSON object: ${(err as Error).message}` }] };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { line, seq, text, values: {}, json: undefined, errors: [{ message: 'must be a JSON object of attribute → value' }] };
  }
  const object = parsed as Record<string, unknown>;
  // The usual line names attributes only: JSON.parse's object is the row's values as it is
  // (no copy per row). Otherwise only attribute names (NAME_PATTERN) are copied, so
  // `__proto__` in a line is an unknown key and never a prototype.
  if (onlyAttributes(object, shape)) return { line, seq, text, values: object, json: text, errors: shape.checkValues(object, 'create') };
  const values: Record<string, unknown> = {};
  const errors: RowError[] = [];
  for (const [key, value] of Object.entries(object)) {
    if (shape.isSystem(key)) {
      notes.ignored.add(key);
    } else if (!shape.get(key)) {
      errors.push({ attribute: key, message: shape.unknown(key) });
    } else {
      values[key] = value;
    }
  }
  errors.push(...shape.check(values, 'create'));
  return { line, seq, text, values, json: undefined, errors };
}

/** Whether every key of a parsed line is an attribute of the object. */
function onlyAttributes(object: Record<string, unknown>, shape: RecordShape): boolean {
  for (const key in object) if (!shape.get(key)) return false;
  return true;
}

/** An empty or all-whitespace line (NDJSON allows them); a line starting with `{` is not one. */
const isBlank = (text: string): boolean => text.length === 0 || (text.charCodeAt(0) !== 0x7b && text.trim() === '');

/**
 * CSV (csv-parse): the header row names the attributes. An unknown column is refused
 * before any row is read, so before any write (issue 17 "Bad input"). An unquoted empty
 * cell is "no value" (null); a quoted one (`""`) is the empty string — the distinction
 * `records export` writes. A row with the wrong number of cells is that row's error; an
 * unbalanced quote ends the file (everything after it would be one cell) and is fatal.
 */
async function* readCsv(input: Readable, shape: RecordShape, notes: ReadNotes): AsyncGenerator<SourceRow[]> {
  // A read error while csv-parse loads is held and ends the parse below, as one after it does.
  let early: Error | undefined;
  const hold = (err: Error): void => void (early ??= err);
  input.on('error', hold);
  // Loaded here, not at the top: its ten modules were ~6 ms of every NDJSON import's start.
  const { parse: parseCsv } = await import('csv-parse');
  const parser = input.pipe(
    parseCsv({
      info: true,
      bom: true,
      relax_column_count: true,
      skip_empty_lines: true,
      cast: (value, context) => (value === '' && !context.quoting ? null : value),
    }),
  );
  input.off('error', hold);
  input.on('error', (err) => parser.destroy(err));
  if (early) parser.destroy(early);
  let header: (string | null)[] | undefined;
  let seq = 0;
  try {
    for await (const item of parser as AsyncIterable<{ record: (string | null)[]; info: { lines: number } }>) {
      const cells = item.record;
      // A record ends on info.lines; a quoted cell with line breaks started it earlier.
      const line = item.info.lines - cells.reduce((n, c) => n + (c === null ? 0 : countNewlines(c)), 0);
      if (!header) {
        header = cells;
        checkHeader(header, shape, notes, line);
        continue;
      }
      // The record as read, unambiguously (null and "" apart).
      const text = JSON.stringify(cells);
      if (cells.length !== header.length) {
        yield [{ line, seq: seq++, text, values: {}, json: undefined, errors: [{ message: `has ${cells.length} cells; the header has ${header.length}` }] }];
        continue;
      }
      const values: Record<string, unknown> = {};
      const errors: RowError[] = [];
      for (let i = 0; i < cells.length; i++) {
        const name = header[i]!;
        if (shape.isSystem(name)) continue;
        const v = shape.fromCell(name, cells[i] ?? null);
        if (v.ok) values[name] = v.value;
        else errors.push({ attribute: name, column: i + 1, message: v.message });
      }
      // Every problem of the row: the type rules run on the cells that converted.
      for (const e of shape.check(values, 'create')) {
        if (errors.some((x) => x.attribute === e.attribute)) continue;
        const i = e.attribute === undefined ? -1 : header.indexOf(e.attribute);
        errors.push(i >= 0 ? { ...e, column: i + 1 } : e);
      }
      yield [{ line, seq: seq++, text, values, json: undefined, errors }];
    }
  } catch (err) {
    const e = err as CsvError & { lines?: number };
    if (typeof e.code === 'string' && e.code.startsWith('CSV_')) {
      const unclosed = e.code === 'CSV_QUOTE_NOT_CLOSED';
      throw new CliError(`malformed CSV at line ${e.lines ?? '?'}: ${unclosed ? 'a quoted cell is not closed' : e.message}`, {
        hint: `${unclosed ? 'a quote opened on or before that line has no closing quote; ' : ''}batches sent before it stay imported, and a rerun of the fixed file does not write them again`,
      });
    }
    throw err;
  }
  if (!header) throw new CliError('the CSV file is empty: it needs a header row naming the attributes');
}

function countNewlines(s: string): number {
  let n = 0;
  for (let i = s.indexOf('\n'); i !== -1; i = s.indexOf('\n', i + 1)) n++;
  return n;
}

function checkHeader(header: (string | null)[], shape: RecordShape, notes: ReadNotes, line: number): void {
  const seen = new Set<string>();
  const problems: string[] = [];
  header.forEach((name, i) => {
    if (name === null || name === '') problems.push(`column ${i + 1} has no name`);
    else if (seen.has(name)) problems.push(`column ${i + 1} repeats ${JSON.stringify(name)}`);
    else if (shape.isSystem(name)) notes.ignored.add(name);
    else if (!shape.get(name)) problems.push(`column ${i + 1}: ${shape.unknown(name)}`);
    if (name) seen.add(name);
  });
  if (problems.length > 0) {
    throw new CliError(`the CSV header (line ${line}) does not match object ${shape.name}: ${problems.join('; ')}. Nothing was imported.`, {
      hint: `the header row names attributes of ${shape.name}: ${shape.attributes.map((a) => a.name).join(', ')}`,
    });
  }
}
