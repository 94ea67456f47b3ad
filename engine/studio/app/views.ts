import { api, seg } from './api.js';
import { h, notice, replace } from './dom.js';
import { formatValue } from './format.js';
import { ownerText } from './objects.js';
import { objectNamed } from './schema.js';
import { button, errorNotice, link, pageHeading, table } from './ui.js';
import type { RecordOut, View } from './types.js';

/** Views (contract.md §3): their definitions, and running them page by page. */
export async function viewsPage(main: HTMLElement): Promise<void> {
  const answer = await api<View[]>('GET', '/views');
  main.append(
    pageHeading('Views'),
    answer.data.length === 0
      ? notice('info', 'No views yet.')
      : table(
          'Views',
          ['Name', 'Object', 'Label', 'Owner', 'Columns'],
          answer.data.map((v) => [link(`#/views/${seg(v.name)}`, v.name), v.object, v.label ?? '', ownerText(v.owner), (v.columns ?? []).join(', ')]),
        ),
  );
}

export async function viewPage(main: HTMLElement, [name = '']: string[]): Promise<void> {
  const view = (await api<View>('GET', `/views/${seg(name)}`)).data;
  const o = await objectNamed(view.object);
  const results = h('div', { class: 'view-results', 'aria-live': 'polite' });
  const cursors: (string | null)[] = [null];
  let page = 0;
  const runPage = async () => {
    try {
      const cursor = cursors[page];
      const qs = new URLSearchParams({ limit: '50', ...(cursor ? { cursor } : {}) });
      const answer = await api<RecordOut[]>('GET', `/views/${seg(name)}/records?${qs}`);
      cursors[page + 1] = answer.page?.nextCursor ?? null;
      const columns = view.columns ?? o?.attributes.filter((a) => !a.system).map((a) => a.name) ?? [];
      const attr = (c: string) => o?.attributes.find((a) => a.name === c);
      replace(
        results,
        answer.data.length === 0
          ? notice('info', 'The view matches no records.')
          : table(`Records of view ${name}`, ['Record', ...columns], answer.data.map((r) => [link(`#/records/${seg(view.object)}/${seg(r.id)}`, r.id.slice(0, 8), { class: 'mono' }), ...columns.map((c) => formatValue(r.values[c], attr(c)))])),
        h(
          'nav',
          { class: 'pager', 'aria-label': 'Pages' },
          button('Previous page', () => { page -= 1; void runPage(); }, { disabled: page === 0 }),
          h('span', null, `Page ${page + 1}`),
          button('Next page', () => { page += 1; void runPage(); }, { disabled: !cursors[page + 1] }),
        ),
      );
    } catch (err) {
      replace(results, errorNotice(err));
    }
  };
  main.append(
    pageHeading(`View ${view.name}`),
    h(
      'dl',
      { class: 'facts' },
      h('dt', null, 'Object'),
      h('dd', null, link(`#/records/${seg(view.object)}`, view.object)),
      h('dt', null, 'Owner'),
      h('dd', null, ownerText(view.owner)),
      h('dt', null, 'Filter'),
      h('dd', null, h('pre', null, view.filter === undefined ? '(none)' : JSON.stringify(view.filter, null, 2))),
      h('dt', null, 'Sort'),
      h('dd', null, (view.sort ?? []).map((s) => `${s.attribute} ${s.direction ?? 'asc'}`).join(', ') || '(server order)'),
      h('dt', null, 'Columns'),
      h('dd', null, (view.columns ?? []).join(', ') || '(all)'),
    ),
    h('h2', null, 'Records'),
    results,
  );
  await runPage();
}
