import { readFileSync, statSync } from 'node:fs';
import { isScalar, LineCounter, parseDocument, visit, type Document } from 'yaml';
import type { Diagnostic } from './diagnostic.js';
import { plainYamlValue } from './fast-yaml.js';
import { locate, type Position } from './locate.js';

/**
 * Parsing one declaration file with positions (contract.md §2: errors name file:line:column).
 * Hostile input is refused before it costs anything: files over MAX_FILE_BYTES are not
 * read, aliases are capped, duplicate keys are errors. Shared by load.ts and the parse
 * worker (parse-worker.ts), so both refuse the same things the same way.
 */
/**
 * Parsing costs about 1 s per MB here, and an honest declaration file is a few hundred KB
 * (1,000 objects × 50 attributes is ~3 MB in all): 4 MB bounds one file's cost without
 * refusing a real schema. load.ts also caps the total (MAX_TOTAL_BYTES).
 */
export const MAX_FILE_BYTES = 4 * 1024 * 1024;
/** Enough for any honest use of anchors; an alias bomb needs thousands. */
export const MAX_ALIAS_COUNT = 100;

export interface LocatedDiagnostic extends Diagnostic {
  /** Absolute path of the file. */
  file: string;
  line: number;
  column: number;
}

/**
 * One parsed file. `usable` when its content could be read (syntax errors other than
 * duplicate keys make it unusable). A file parsed in a worker comes back without its
 * document; docOf() re-parses it here only if a diagnostic must be located in it.
 */
export interface Parsed {
  file: string;
  usable: boolean;
  value?: unknown;
  doc?: Document;
  lineCounter?: LineCounter;
}

function parseText(text: string, lineCounter: LineCounter): Document {
  return withPlainEnv(() => parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true, strict: true }));
}

export function docOf(parsed: Parsed): { doc: Document; lineCounter: LineCounter } | undefined {
  if (!parsed.doc && parsed.usable) {
    parsed.lineCounter = new LineCounter();
    parsed.doc = parseText(readFileSync(parsed.file, 'utf8'), parsed.lineCounter);
  }
  return parsed.doc && parsed.lineCounter ? { doc: parsed.doc, lineCounter: parsed.lineCounter } : undefined;
}

export function located(parsed: Parsed | undefined, d: Diagnostic, file = parsed?.file ?? ''): LocatedDiagnostic {
  const found = parsed ? docOf(parsed) : undefined;
  const pos: Position = found ? locate(found.doc, found.lineCounter, d.path, d.on) : { line: 1, column: 1 };
  return { ...d, file, line: pos.line, column: pos.column };
}

/** Parse one YAML file; syntax errors, alias bombs and oversized files become diagnostics. */
export function parseFile(file: string, out: LocatedDiagnostic[]): Parsed {
  const failed: Parsed = { file, usable: false };
  const reported = out.length;
  const lineCounter = new LineCounter();
  let text: string;
  try {
    const size = statSync(file).size;
    if (size > MAX_FILE_BYTES) {
      out.push({
        severity: 'error',
        code: 'SCHEMA_VALIDATION_FAILED',
        message: `File is ${mb(size)} MB; declaration files over ${MAX_FILE_BYTES / 1024 / 1024} MB are refused`,
        fix: 'Split the declaration into several files.',
        path: [],
        file,
        line: 1,
        column: 1,
      });
      return failed;
    }
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    out.push({
      severity: 'error',
      code: 'SCHEMA_VALIDATION_FAILED',
      message: code === 'ENOENT' ? 'File not found' : `Cannot read the file (${code ?? (err as Error).message})`,
      path: [],
      file,
      line: 1,
      column: 1,
    });
    return failed;
  }
  // Most files are plain YAML, which js-yaml reads ~8× faster to the same value; anything
  // else (and every file with a problem) is read by yaml below, with positions (fast-yaml.ts).
  const plain = plainYamlValue(text);
  if (plain) return { file, usable: true, value: plain.value };
  let doc: Document;
  try {
    doc = parseText(text, lineCounter);
  } catch (err) {
    out.push({ severity: 'error', code: 'SCHEMA_VALIDATION_FAILED', message: `Cannot read the YAML: ${(err as Error).message}`, path: [], file, line: 1, column: 1 });
    return failed;
  }
  const parsed: Parsed = { file, usable: true, doc, lineCounter };
  // yaml's composer recurses per nesting level and records each level's stack overflow
  // as its own error; one sentence says it better than thousands.
  const overflow = doc.errors.find((e) => /call stack/i.test(e.message));
  if (overflow) {
    const { line, col } = lineCounter.linePos(overflow.pos[0]);
    out.push({
      severity: 'error',
      code: 'SCHEMA_VALIDATION_FAILED',
      message: 'The YAML nests too deeply to read',
      path: [],
      file,
      line,
      column: col,
    });
    return failed;
  }
  const syntax = [...doc.errors, ...doc.warnings.map((w) => Object.assign(w, { warning: true }))];
  for (const e of syntax) {
    const { line, col } = lineCounter.linePos(e.pos[0]);
    out.push({
      severity: 'warning' in e ? 'warning' : 'error',
      code: 'SCHEMA_VALIDATION_FAILED',
      message: yamlMessage(e.code, e.message, e.code === 'DUPLICATE_KEY' ? keyAt(text, e.pos[0]) : text.slice(e.pos[0], e.pos[1])),
      path: [],
      file,
      line,
      column: col,
    });
  }
  // A duplicate key leaves a usable document: yaml keeps the LAST value (locate.ts points
  // there too), so the rest of the file is still checked; the duplicate's own message says
  // the earlier copy is ignored. Any other syntax error makes the content unreliable.
  if (doc.errors.some((e) => e.code !== 'DUPLICATE_KEY')) return failed;
  // Walking the tree costs a tenth of the parse: only when the text could hold one.
  if (text.includes('<<') && refuseMergeKeys(doc, lineCounter, file, out)) return failed;
  if (text.includes('*') && refuseCyclicAliases(doc, lineCounter, file, out)) return failed;
  try {
    parsed.value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (err) {
    // yaml throws on an alias expansion beyond maxAliasCount (a "billion laughs" file).
    let offset = 0;
    visit(doc, {
      Alias(_, node) {
        offset = node.range?.[0] ?? 0;
        return visit.BREAK;
      },
    });
    const { line, col } = lineCounter.linePos(offset);
    const bomb = /alias/i.test((err as Error).message);
    out.push({
      severity: 'error',
      code: 'SCHEMA_VALIDATION_FAILED',
      message: bomb
        ? `Too many alias expansions (more than ${MAX_ALIAS_COUNT}): refusing a file that expands exponentially`
        : `Cannot read the YAML: ${(err as Error).message}`,
      path: [],
      file,
      line,
      column: col,
    });
    return failed;
  }
  // A clean file's tree is dropped: kept for every file of a large project it is a heap
  // many times the text that each garbage collection walks again (a fifth of validate's
  // time). The few files a later rule finds fault with are re-parsed by docOf().
  return out.length === reported ? { file, usable: true, value: parsed.value } : parsed;
}

export const mb = (bytes: number): string => (bytes / 1024 / 1024).toFixed(1);

/**
 * `<<: *base` is a YAML 1.1 merge key; the YAML 1.2 core schema reads it as an ordinary key
 * named "<<", which would surface as a baffling "invalid attribute name". Merging is not
 * supported (one place per attribute keeps positions and renames unambiguous); say so.
 */
function refuseMergeKeys(doc: Document, lineCounter: LineCounter, file: string, out: LocatedDiagnostic[]): boolean {
  let found = false;
  visit(doc, {
    Pair(_, pair) {
      if (!isScalar(pair.key) || pair.key.value !== '<<') return;
      found = true;
      const { line, col } = lineCounter.linePos(pair.key.range?.[0] ?? 0);
      out.push({
        severity: 'error',
        code: 'SCHEMA_VALIDATION_FAILED',
        message: 'YAML merge keys ("<<: *anchor") are not supported in declaration files',
        fix: 'Write the fields out, or use a plain alias for a whole value (`status: *status_field`).',
        path: [],
        file,
        line,
        column: col,
      });
    },
  });
  return found;
}

/**
 * An alias inside the very node its anchor names (`a: &a { default: [*a] }`) makes the value
 * contain itself: yaml builds the loop, and everything after (the checks, JSON for the
 * push) would recurse for ever or fail far from the file. Refused at the alias. Anchors
 * only point backwards, so any loop has such an alias: one inside its own anchor's node.
 */
function refuseCyclicAliases(doc: Document, lineCounter: LineCounter, file: string, out: LocatedDiagnostic[]): boolean {
  let found = false;
  visit(doc, {
    Alias(_, alias, ancestors) {
      const target = alias.resolve(doc);
      if (!target || !ancestors.includes(target)) return;
      found = true;
      const at = lineCounter.linePos(alias.range?.[0] ?? 0);
      const anchor = lineCounter.linePos(target.range?.[0] ?? 0);
      out.push({
        severity: 'error',
        code: 'SCHEMA_VALIDATION_FAILED',
        message: `The alias *${alias.source} is inside the value its anchor &${alias.source} names (line ${anchor.line}), so that value would contain itself without end`,
        fix: 'Write the value out, or point the alias at a value that does not contain it.',
        path: [],
        file,
        line: at.line,
        column: at.col,
      });
    },
  });
  return found;
}

/**
 * yaml 2's parser reads `process.env.LOG_TOKENS` once per token, and process.env is a
 * slow native lookup: on a 1,000-object declaration that is a third of the parse time.
 * During the (synchronous) parse, process.env is a plain copy; it is restored at once.
 */
export function withPlainEnv<T>(fn: () => T): T {
  const real = process.env;
  process.env = { ...real };
  try {
    return fn();
  } finally {
    process.env = real;
  }
}

/** The key starting at `offset` (yaml's DUPLICATE_KEY range covers only its first character). */
function keyAt(text: string, offset: number): string {
  const m = /^("(?:[^"\\\n]|\\.)*"|'[^'\n]*'|[^:,{}\n]*?)\s*:/.exec(text.slice(offset, offset + 200));
  return m ? m[1]!.replace(/^["']|["']$/g, '') : text.slice(offset, offset + 1);
}

/** yaml's messages, reworded where they are terse, with the offending text. */
function yamlMessage(code: string, message: string, source: string): string {
  const snippet = source.trim().split('\n')[0]?.slice(0, 40) ?? '';
  switch (code) {
    case 'DUPLICATE_KEY':
      return `Key "${snippet}" appears twice in the same mapping: only this last one is read, the earlier one is ignored and not checked`;
    case 'MULTIPLE_DOCS':
      return 'A declaration file holds one YAML document; remove the `---` or split the file';
    case 'BAD_INDENT':
    case 'MISSING_CHAR':
    case 'UNEXPECTED_TOKEN':
    case 'BLOCK_AS_IMPLICIT_KEY':
      return `YAML syntax error: ${message.replace(/\.$/, '')}${snippet ? ` near "${snippet}"` : ''}`;
    case 'BAD_ALIAS':
      return `YAML alias refers to an anchor that is not defined: ${message}`;
    default:
      return `YAML syntax error: ${message}`;
  }
}

