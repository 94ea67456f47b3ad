import type { Executor, FulltextInput } from '../port.js';
import type { SearchHit } from '../../model/search-hit.js';
import { parseLayout } from '../sql/search-layout.js';
import { wordsSql, wordsText } from './fulltext-words.js';
import { CLOSE, fragment, holdsMarkers, JOIN, OPEN, queryTerms, shownSegment, unmark, withoutMarkers } from '../sql/search-text.js';

/**
 * Running a cross-object search (contract.md §3) against the index fulltext.ts keeps.
 *
 * The user's query is never tsquery syntax: it is split as the SQLite backend splits it
 * (`"quoted phrases"` matched exactly, bare words by prefix), and each term goes to
 * PostgreSQL as a bound string: a phrase through phraseto_tsquery, a word through
 * `_ss_prefix_tsquery` (its tokens, each a prefix, in order), so `&`, `|`, `!`, `:*` or
 * parentheses in a query are plain text and no query is a syntax error. A row must match
 * every term: a record's row holds all its text-like attributes (a word may be in one and the
 * next word in another; a phrase never runs across the separator between them), a
 * document's row its title. A term with no letter or digit is left out; a query with none
 * finds nothing.
 */

const CONFIG = "'schemasync_search'";

/**
 * The tsquery of a user query as a WITH clause naming it `q` (column `q`), with its
 * parameters; null when it has no searchable term. MATERIALIZED: the query is made once per
 * statement. As a subquery in FROM, PostgreSQL inlined it and called `_ss_prefix_tsquery` (a
 * ts_debug of the query) for every candidate row, in the recheck and in ts_rank: a prefix
 * matching 1,529 of 50,000 records took 303 ms, 8 ms made once.
 */
function tsQuery(query: string): { sql: string; params: string[] } | null {
  const parts: string[] = [];
  const params: string[] = [];
  for (const { text, phrase } of queryTerms(query)) {
    parts.push(phrase ? `phraseto_tsquery(${CONFIG}, ${wordsSql('?::text')})` : '_ss_prefix_tsquery(?::text)');
    params.push(text);
  }
  return parts.length === 0 ? null : { sql: `WITH q AS MATERIALIZED (SELECT ${parts.join(' && ')} AS q) `, params };
}

/** The whole of each segment, every matching word marked: the snippet is cut in JS (sql/search-text.ts fragment), as on SQLite. */
const HEADLINE = `StartSel=${OPEN}, StopSel=${CLOSE}, HighlightAll=true`;

interface Segment {
  id: number;
  object: string;
  attribute: string | null;
  layout: string | null;
  text: string;
  marked: string;
}

/**
 * Best first: ts_rank over each record's row (and each document's), the best row per record
 * kept. Rank normalisation 1 divides by 1 + log(length), so a short text naming the term
 * outranks a long one mentioning it once, as FTS5's bm25 ranks them (without it they tie).
 * Ranking reads only `_ss_search`; headlines are made for the returned hits only.
 */
export async function runFulltext(ex: Executor, input: FulltextInput): Promise<SearchHit[]> {
  const q = tsQuery(input.query);
  if (q === null || (input.objects !== null && input.objects.length === 0)) return [];
  const scope = input.objects === null ? '' : ' AND s.object IN (SELECT jsonb_array_elements_text(?::jsonb))';
  const scopeParams = input.objects === null ? [] : [JSON.stringify(input.objects)];
  const hits = new Map<string, { object: string; id: string; row: number; score: number }>();
  // A record matching in its row and in document titles yields several rows: a few extra rows
  // per hit are read so dedup still fills the page in the common case, and the loop reads more if not.
  let fetch = input.limit * 3;
  for (;;) {
    const rows = await ex.all<{ id: number; object: string; record_id: string; rank: number }>(
      `${q.sql}SELECT s.id, s.object, s.record_id, ts_rank(s.tsv, q.q, 1) AS rank FROM _ss_search s, q WHERE s.tsv @@ q.q${scope} ORDER BY rank DESC, s.id LIMIT ?`,
      [...q.params, ...scopeParams, fetch],
    );
    hits.clear();
    for (const r of rows) {
      const key = `${r.object}\u0000${r.record_id}`;
      if (!hits.has(key)) hits.set(key, { object: r.object, id: r.record_id, row: Number(r.id), score: Number(r.rank) });
      if (hits.size === input.limit) break;
    }
    if (hits.size >= input.limit || rows.length < fetch) break;
    fetch *= 4;
  }
  const chosen = [...hits.values()];
  if (chosen.length === 0) return [];
  // Each chosen row's segments (a record's attributes in layout order; a document's title is
  // one), each marked whole.
  const segments = await ex.all<Segment>(
    `${q.sql}SELECT s.id, s.object, s.attribute, l.attributes AS layout, g.t AS text, ts_headline(${CONFIG}, ${wordsSql('g.t')}, q.q, '${HEADLINE}') AS marked ` +
      `FROM _ss_search s LEFT JOIN _ss_search_layout l ON l.object = s.object AND s.document_id IS NULL, q, ` +
      `LATERAL unnest(CASE WHEN s.document_id IS NULL THEN string_to_array(s.text, ?) ELSE ARRAY[s.text] END) WITH ORDINALITY AS g(t, n) ` +
      'WHERE s.id IN (SELECT jsonb_array_elements_text(?::jsonb)::bigint) ORDER BY s.id, g.n',
    [...q.params, JOIN, JSON.stringify(chosen.map((c) => c.row))],
  );
  const byRow = new Map<number, Segment[]>();
  for (const g of segments) byRow.set(Number(g.id), [...(byRow.get(Number(g.id)) ?? []), g]);
  return chosen.map((c) => {
    const hit = shown(byRow.get(c.row) ?? []);
    const { snippet, highlights } = unmark(hit.marked);
    return { object: c.object, id: c.id, attribute: hit.attribute, score: c.score, snippet, highlights };
  });
}

/**
 * The attribute a hit is shown in and its marked fragment, as the SQLite backend shows it
 * (sql/search-text.ts shownSegment; a row holding a marker character is shown plain).
 */
function shown(segments: readonly Segment[]): { attribute: string; marked: string } {
  const first = segments[0];
  if (first === undefined) return { attribute: '', marked: '' };
  const plain = segments.some((g) => holdsMarkers(g.text));
  const marked = segments.map((g) => {
    if (plain) return withoutMarkers(g.text);
    return markedAsStored(g.marked, g.text);
  });
  if (first.attribute !== null) return { attribute: first.attribute, marked: fragment(marked[0]!) };
  return shownSegment(marked, first.layout === null ? [] : parseLayout(first.object, first.layout), plain);
}

/**
 * The stored text with the marks ts_headline put into its words-only form (fulltext-words.ts):
 * contract.md §3 wants the text as stored, no markup added or taken away. The two forms have
 * the same length, so each mark goes to the same offset. A headline that is not that form
 * after all is not used: the text is shown unmarked, exactly as stored.
 */
function markedAsStored(marked: string, text: string): string {
  const { snippet, highlights } = unmark(marked);
  if (snippet !== wordsText(text)) return text;
  let out = '';
  let at = 0;
  for (const [start, end] of highlights) {
    out += `${text.slice(at, start)}${OPEN}${text.slice(start, end)}${CLOSE}`;
    at = end;
  }
  return out + text.slice(at);
}
