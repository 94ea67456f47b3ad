import { api, seg } from './api.js';
import { h, notice, replace } from './dom.js';
import { objects } from './schema.js';
import { button, errorNotice, link, pageHeading, table } from './ui.js';
import type { SourceHistoryEntry, SourceOut, View } from './types.js';

/**
 * Schema sources (contract.md §3): the declaration last pushed and its history. The API
 * has no list of sources, so the list is every source that owns an object or a view.
 */
export async function sourcesPage(main: HTMLElement): Promise<void> {
  const [list, views] = await Promise.all([objects(), api<View[]>('GET', '/views').then((r) => r.data).catch(() => [] as View[])]);
  const ids = [...new Set([...list, ...views].filter((x) => x.owner.kind === 'source' && x.owner.id).map((x) => x.owner.id!))].sort();
  main.append(
    pageHeading('Sources'),
    ids.length === 0
      ? notice('info', 'No source owns anything yet. Push one with schemasync sync.')
      : table('Sources', ['Source', 'Objects', 'Views'], ids.map((id) => [
          link(`#/sources/${seg(id)}`, id),
          list.filter((o) => o.owner.id === id && o.owner.kind === 'source').map((o) => o.name).join(', '),
          views.filter((v) => v.owner.id === id && v.owner.kind === 'source').map((v) => v.name).join(', '),
        ])),
  );
}

export async function sourcePage(main: HTMLElement, [id = '']: string[]): Promise<void> {
  const source = (await api<SourceOut>('GET', `/schema/sources/${seg(id)}`)).data;
  const history = h('div', { 'aria-live': 'polite' });
  main.append(
    pageHeading(`Source ${source.id}`),
    h(
      'dl',
      { class: 'facts' },
      h('dt', null, 'Version'),
      h('dd', null, String(source.version)),
      h('dt', null, 'Applied'),
      h('dd', null, source.appliedAt ?? 'never'),
      h('dt', null, 'Objects'),
      h('dd', null, source.objects.join(', ') || '(none)'),
      h('dt', null, 'Views'),
      h('dd', null, source.views.join(', ') || '(none)'),
    ),
    h('h2', null, 'History'),
    history,
    h('h2', null, 'Current declaration'),
    h('pre', { class: 'declaration', tabIndex: 0, 'aria-label': 'Current declaration (JSON)' }, JSON.stringify(source.declaration, null, 2)),
  );
  await loadHistory(id, history, null);
}

async function loadHistory(id: string, into: HTMLElement, cursor: string | null): Promise<void> {
  try {
    const qs = cursor ? `?cursor=${encodeURIComponent(cursor)}` : '';
    const answer = await api<SourceHistoryEntry[]>('GET', `/schema/sources/${seg(id)}/history${qs}`);
    const next = answer.page?.nextCursor ?? null;
    into.append(
      table(
        `History of ${id}`,
        ['Version', 'Applied', 'Key', 'Steps', 'Destructive', 'Plan hash'],
        answer.data.map((e) => [
          String(e.version),
          e.appliedAt,
          e.key ? e.key.name : '',
          e.steps ? `+${e.steps.create} ~${e.steps.change} -${e.steps.drop}` : '',
          (e.destructive ?? []).join(', '),
          h('code', null, (e.planHash ?? '').slice(0, 12)),
        ]),
      ),
    );
    if (next) {
      const more: HTMLButtonElement = button('Older pushes', () => {
        more.remove();
        void loadHistory(id, into, next);
      });
      into.append(more);
    }
  } catch (err) {
    replace(into, errorNotice(err));
  }
}
