import jsyaml from 'js-yaml';
import { isScalar, Schema } from 'yaml';

/**
 * The value of a plain declaration file, read by js-yaml instead of yaml: ~8× faster here
 * (20 files of the 1,000-object × 50-attribute project: ~0.2 s against ~1.7 s, cold), and a
 * large project's `validate`, `plan`, `sync` and watch spent most of their time parsing.
 * yaml stays the parser of record: it is what reports syntax errors with their positions,
 * refuses alias bombs, merge keys and cyclic aliases, and what docOf() (parse-file.ts) reads
 * again when a later rule must point into a file. So this path only ever answers for files
 * where both parsers give the same value without an error or a warning, and says "not
 * mine" (undefined) for everything else, which parse-file.ts then reads with yaml as before:
 *
 * - It reads only text without the YAML features where the two could part (`PLAIN`): no
 *   anchors or aliases, tags, directives, document markers, block scalars, explicit keys,
 *   tabs, a carriage return that does not end a line (CRLF is read as LF) or a byte-order mark, no key written as null (yaml names that
 *   key "", js-yaml "null"), and none of the spellings below where the property test found
 *   the two apart. A file that holds such a thing anywhere, even inside a quoted string,
 *   goes to yaml whole: slower, never different.
 * - Plain scalars resolve by `CORE`: yaml's own YAML 1.2 core schema tags, handed to js-yaml,
 *   not js-yaml's core schema, which reads `1_000` as a number where yaml keeps the text.
 * - Anything js-yaml refuses or warns about (a syntax error, a duplicate key, nesting too
 *   deep for its stack) goes to yaml, which reports it as it always did.
 *
 * test/unit/fast-yaml.property.test.ts holds the two parsers to the same value on random
 * declarations and scalars, and checks that yaml accepts every text this path reads.
 */
export function plainYamlValue(source: string): { value: unknown } | undefined {
  // CRLF line ends (a file saved on Windows) are line breaks to both parsers alike; a lone CR is left to yaml.
  const text = source.includes('\r') ? (LONE_CR.test(source) ? undefined : source.replace(/\r\n/g, '\n')) : source;
  if (text === undefined || !PLAIN(text)) return undefined;
  let warned = false;
  let value: unknown;
  try {
    value = jsyaml.load(text, { schema: CORE, onWarning: () => void (warned = true) });
  } catch {
    return undefined;
  }
  // An empty or comment-only file: yaml's value is null, js-yaml's undefined.
  if (warned || value === undefined) return undefined;
  return { value };
}

/**
 * YAML features this path leaves to yaml (see above): an anchor, alias, tag or block scalar
 * where a node can start (after a line start, a space or `[ { ,`: `"image/*"` is read here, `*ref`
 * is not), an explicit key, a directive, a merge key, a document marker, tabs, a BOM; and
 * places where the two part, found by the property test: a `#` right after a quote, a bracket,
 * a brace or a comma (yaml: a comment needs a space before it), a flow collection used as a key
 * (`[a]: b`: js-yaml names it by String()), and an escaped line break in a double-quoted
 * scalar followed by an empty line (folded differently).
 */
const FEATURES = /(?:^|[\s[{,])(?:[&*!|>]|\?(?:\s|$))|^%|<<|^(?:---|\.\.\.)|[\t\uFEFF]|["'[\]{},]#|[\]}]\s*:|\\\n/m;
const LONE_CR = /\r(?!\n)/;
/** A key written as null or empty (`~:`, `null:`, ` :`, `{~}`): yaml stringifies it as "", js-yaml as "null". */
const NULL_KEY = /(?:^|[\s{,[])(?:~|[Nn]ull|NULL)?[ ]*:(?=[\s,\]}]|$)|[{,]\s*(?:~|[Nn]ull|NULL)\s*[,}]/m;
/** The first line with content indented (js-yaml reads `  - a` then `- b` as one list; yaml refuses the second line). */
const INDENTED_START = /^(?:[ ]*(?:#[^\n]*)?\n)*[ ]+[^\s#]/;
/** A block sequence entry with no node (`- ` or `- # note`): js-yaml lets the next entry sit at another indentation, yaml does not. */
const EMPTY_ENTRY = /(?:^|[ ])-[ ]*(?:#[^\n]*)?$/m;
const PLAIN = (text: string): boolean =>
  !FEATURES.test(text) && !NULL_KEY.test(text) && !INDENTED_START.test(text) && !EMPTY_ENTRY.test(text) && !flowKeyIsCollection(text);

/**
 * Whether a flow mapping has a collection as a key with no `:` after it (`{ [a] }`, `{ b: 1, {c} }`):
 * js-yaml names such a key by String() (`a`, "[object Object]"), yaml by the collection's text.
 * (With a `:` after it, FEATURES declines it.) A scan of the flow collections only: quoted
 * scalars are skipped where a node can start, so brackets inside them do not count; text it
 * cannot follow makes it answer true, which sends the file to yaml.
 */
function flowKeyIsCollection(text: string): boolean {
  if (!text.includes('{')) return false;
  const open: string[] = [];
  // Whether the next node starts an entry of the innermost flow mapping (after `{` or `,`).
  let keyStart = false;
  let nodeStart = true;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === ' ' || c === '\n') continue;
    if (nodeStart && (c === '"' || c === "'")) {
      const end = quoteEnd(text, i, c);
      if (end < 0) return true;
      i = end;
      nodeStart = keyStart = false;
      continue;
    }
    if (c === '{' || c === '[') {
      if (keyStart && open.at(-1) === '{') return true;
      open.push(c);
      keyStart = c === '{';
      nodeStart = true;
      continue;
    }
    if (c === '}' || c === ']') {
      open.pop();
      nodeStart = keyStart = false;
      continue;
    }
    if (c === ',' && open.length > 0) {
      keyStart = open.at(-1) === '{';
      nodeStart = true;
      continue;
    }
    // `: ` starts a value, `- ` a block sequence entry, a line a block node: quotes may open there.
    nodeStart = (c === ':' || c === '-') && (text[i + 1] === ' ' || text[i + 1] === '\n');
    keyStart = false;
  }
  return false;
}

/** The index of the quote that ends the quoted scalar starting at `from` (`''` and `\"` stay inside); -1 if none. */
function quoteEnd(text: string, from: number, quote: string): number {
  for (let i = from + 1; i < text.length; i++) {
    if (quote === '"' && text[i] === '\\') i++;
    else if (text[i] === quote) {
      if (quote === "'" && text[i + 1] === "'") i++;
      else return i;
    }
  }
  return -1;
}

/**
 * yaml's own core schema (the tags `yaml` resolves plain scalars by, in its order: null, bool,
 * int octal/decimal/hex, float nan-inf/exponent/plain) as js-yaml implicit types, so the rule
 * of what a plain scalar means lives in one place, yaml's. One js-yaml type per tag, trying
 * that tag's forms in yaml's order: js-yaml keeps only the last type it is given for a tag.
 * Each value is made by yaml's own `resolve` (a Scalar is unwrapped); a form that reports an
 * error throws, and js-yaml's refusal sends the file to yaml.
 */
type YamlScalarTag = { tag: string; test: RegExp; resolve: (s: string, onError: (message: string) => void, options: object) => unknown };

const refuse = (message: string): never => {
  throw new Error(message);
};
/** What yaml's resolvers read of the parse options: declarations read integers as numbers. */
const RESOLVE_OPTIONS = { intAsBigInt: false };

function coreTypes(): jsyaml.Type[] {
  const byTag = new Map<string, YamlScalarTag[]>();
  for (const t of new Schema({ schema: 'core' }).tags as unknown[]) {
    const tag = t as Partial<YamlScalarTag> & { default?: unknown };
    if (!(tag.test instanceof RegExp) || typeof tag.resolve !== 'function' || !tag.default || tag.tag === undefined) continue;
    byTag.set(tag.tag, [...(byTag.get(tag.tag) ?? []), tag as YamlScalarTag]);
  }
  return [...byTag].map(([tag, forms]) => {
    const form = (s: string | null) => forms.find((f) => f.test.test(s ?? ''));
    return new jsyaml.Type(tag, {
      kind: 'scalar',
      resolve: (s: string | null) => form(s) !== undefined,
      construct: (s: string | null) => {
        const value = form(s)!.resolve(s ?? '', refuse, RESOLVE_OPTIONS);
        return isScalar(value) ? value.value : value;
      },
    });
  });
}

const CORE = jsyaml.FAILSAFE_SCHEMA.extend({ implicit: coreTypes() });
