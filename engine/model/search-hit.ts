/**
 * One cross-object search hit (contract.md §3 "Cross-object search"): the one definition the
 * store, the routes, the SDK and the MCP tool share.
 */
export interface SearchHit {
  object: string;
  id: string;
  /** Higher is better (the negated bm25 rank); comparable within one answer only. */
  score: number;
  /** Plain text around the best match; never markup. */
  snippet: string;
  /** [start, end) offsets (UTF-16 string indexes) of the matched terms in `snippet`. */
  highlights: [number, number][];
  /** The attribute (or document slot) that matched best. */
  attribute: string;
}
