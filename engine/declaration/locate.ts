import { isMap, isPair, isScalar, isSeq, type Document, type LineCounter, type Node } from 'yaml';
import type { Path } from './diagnostic.js';

export interface Position {
  line: number;
  column: number;
}

/**
 * The line:column of what a diagnostic path points at in a parsed YAML document. Only
 * failing paths are located, so the walk is per diagnostic, never per node. A scalar is
 * located at its value (`type: integr` → the `integr`), a mapping or list at its key
 * (`amount:`), and `on: 'key'` forces the key. A path that runs past the document (a
 * missing field) stops at the deepest node that exists.
 */
export function locate(doc: Document, lineCounter: LineCounter, path: Path, on?: 'key'): Position {
  let node: unknown = doc.contents;
  let keyNode: Node | undefined;
  for (const seg of path) {
    if (isMap(node)) {
      // The last pair: with a duplicate key yaml keeps the last value, so that is where a
      // problem with the value really is (parse-file.ts reports the duplicate itself).
      const pair = node.items.findLast((p) => isPair(p) && (isScalar(p.key) ? p.key.value === seg || String(p.key.value) === String(seg) : false));
      if (!pair) break;
      keyNode = pair.key as Node;
      node = pair.value;
      if (node === null || node === undefined) {
        node = undefined;
        break;
      }
    } else if (isSeq(node) && typeof seg === 'number' && node.items[seg] !== undefined) {
      keyNode = undefined;
      node = node.items[seg];
    } else {
      break;
    }
  }
  // An empty value (`deal:` with nothing after it) has no text of its own: point at its key.
  const empty = isScalar(node) && node.value === null && !(node as { source?: string }).source;
  const useKey = keyNode !== undefined && (on === 'key' || empty || node === undefined || isMap(node) || isSeq(node));
  const target = (useKey ? keyNode : (node as Node | undefined)) ?? keyNode;
  const offset = target?.range?.[0] ?? 0;
  const { line, col } = lineCounter.linePos(offset);
  return { line, column: col };
}
