import { api, seg } from './api.js';
import { field, h, notice, replace } from './dom.js';
import { highlighted } from './format.js';
import { errorNotice, link, pageHeading } from './ui.js';
import type { SearchHit } from './types.js';

/**
 * Cross-object search (contract.md §3 POST /search). Matches are marked from the
 * `highlights` offsets into the plain-text snippet — slices appended as text inside
 * <mark> — so nothing the server sends is ever parsed as markup.
 */
export async function searchPage(main: HTMLElement, _params: string[], query: URLSearchParams): Promise<void> {
  const q = query.get('q') ?? '';
  const input = h('input', { type: 'search', value: q, name: 'q', autocomplete: 'off' });
  const results = h('div', { class: 'search-results', 'aria-live': 'polite' });
  const form = h('form', { role: 'search', class: 'search-form' }, field('Search all records', input), h('button', { type: 'submit' }, 'Search'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    // The query goes into the address, so a search can be bookmarked and Back returns to it;
    // the same query again changes no address, so it is run here.
    const target = `#/search?q=${encodeURIComponent(input.value.trim())}`;
    if (location.hash === target) void run(input.value.trim(), results);
    else location.hash = target;
  });
  main.append(pageHeading('Search'), form, results);
  if (q) await run(q, results);
}

async function run(q: string, results: HTMLElement): Promise<void> {
  try {
    const answer = await api<SearchHit[]>('POST', '/search', { query: q, limit: 50 });
    if (answer.data.length === 0) {
      replace(results, notice('info', `Nothing matches “${q}”.`));
      return;
    }
    replace(
      results,
      h('p', null, `${answer.data.length} matches`),
      h(
        'ol',
        { class: 'hits' },
        answer.data.map((hit) =>
          h(
            'li',
            { class: 'hit' },
            h('div', null, link(`#/records/${seg(hit.object)}/${seg(hit.id)}`, `${hit.object} ${hit.id.slice(0, 8)}`), h('span', { class: 'muted' }, ` · ${hit.attribute}`)),
            h('p', { class: 'snippet' }, highlighted(String(hit.snippet ?? ''), Array.isArray(hit.highlights) ? hit.highlights : [])),
          ),
        ),
      ),
    );
  } catch (err) {
    replace(results, errorNotice(err));
  }
}
