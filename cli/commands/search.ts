import type { SearchHit } from '../../engine/sdk/index.js';
import type { Colors, CommandRun } from '../context.js';
import { MAX_SEARCH_LIMIT } from '../../engine/server/schemas/search.js';
import { connect } from '../instance.js';
import { limitOf } from '../options.js';
import { flatten, renderTable } from '../render/table.js';

interface SearchOptions {
  objects?: string;
  limit?: string;
}

/**
 * `schemasync search "<query>"` (issue 17): cross-object full-text search through the SDK
 * (`client.search`, POST /search). A table in a terminal — the matched words in bold —
 * or the hits as JSON with `--json`. The server checks the query (a blank one is its 400).
 */
export const run: CommandRun<SearchOptions> = async (ctx) => {
  const query = ctx.args[0] ?? '';
  const limit = limitOf(ctx.options.limit, MAX_SEARCH_LIMIT);
  const objects = ctx.options.objects?.split(',').map((o) => o.trim()).filter((o) => o !== '');
  const { client } = connect(ctx);
  const hits = await client.search({ query, ...(objects ? { objects } : {}), ...(limit !== undefined ? { limit } : {}) });
  if (ctx.global.json) {
    ctx.stdout.write(`${JSON.stringify(hits)}\n`);
    return 0;
  }
  if (hits.length === 0) {
    ctx.stdout.write('No matches.\n');
    return 0;
  }
  const rows = hits.map((h) => [h.object, h.id, h.attribute, String(Number(h.score.toPrecision(3))), marked(h, ctx.colors)]);
  for (const line of renderTable(['OBJECT', 'ID', 'ATTRIBUTE', 'SCORE', 'MATCH'], rows, ctx.colors)) ctx.stdout.write(`${line}\n`);
  return 0;
};

/**
 * The snippet with its highlights in bold. Record text is data, never terminal control:
 * control characters become spaces (one UTF-16 unit for one, so the offsets still hold).
 */
function marked(h: SearchHit, c: Colors): string {
  const text = flatten(h.snippet);
  let out = '';
  let at = 0;
  for (const [a, b] of [...h.highlights].sort((x, y) => x[0] - y[0])) {
    if (a < at || b > text.length) continue;
    out += text.slice(at, a) + c.bold(text.slice(a, b));
    at = b;
  }
  return out + text.slice(at);
}
