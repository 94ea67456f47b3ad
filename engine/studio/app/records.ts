import { api, seg } from './api.js';
import { h, notice, replace } from './dom.js';
import { compileFilter, filterControls, type FilterInputs } from './filters.js';
import { formatValue, labelOf } from './format.js';
import { objectNamed } from './schema.js';
import { button, errorNotice, link, pageHeading } from './ui.js';
import type { Attribute, Filter, ObjectInfo, RecordOut } from './types.js';

/**
 * The records table of one object (issue 20): sort by a column, filters from the
 * attribute types, column choice, keyset pagination. Paging follows the server's cursors
 * (contract.md §3), never offsets, so rows others insert meanwhile do not shift what the
 * next page holds; "previous" goes back through the cursors already seen.
 */
interface TableState {
  columns: string[];
  sort: { attribute: string; direction: 'asc' | 'desc' } | null;
  inputs: FilterInputs;
  filter: Filter | undefined;
  /** cursors[i] opens page i (cursors[0] is null: the first page). */
  cursors: (string | null)[];
  page: number;
}

export const PAGE_SIZE = 50;

/** Kept per object for the tab's life, so coming back from a record finds the table as it was. */
const states = new Map<string, TableState>();

function stateFor(o: ObjectInfo): TableState {
  let s = states.get(o.name);
  if (!s) {
    const own = o.attributes.filter((a) => !a.system);
    s = { columns: own.slice(0, 6).map((a) => a.name), sort: null, inputs: {}, filter: undefined, cursors: [null], page: 0 };
    states.set(o.name, s);
  }
  return s;
}

export async function recordsPage(main: HTMLElement, [name = '']: string[]): Promise<void> {
  const o = await objectNamed(name);
  if (!o) {
    main.append(pageHeading('Object not found'), notice('error', `No object named ${name} (or this key may not read it).`));
    return;
  }
  const state = stateFor(o);
  const tableArea = h('div', { class: 'records-area', 'aria-live': 'polite', 'aria-busy': 'false' });
  const count = h('span', { class: 'count' });
  const attrs = o.attributes.filter((a) => !a.system);

  // Only the answer to the latest request is shown: a slower answer to an earlier sort or
  // filter arriving last would otherwise show rows (and a cursor) of an order no longer asked.
  let latest = 0;
  const reload = async (focusTable = false): Promise<void> => {
    const mine = ++latest;
    tableArea.setAttribute('aria-busy', 'true');
    try {
      const body: Record<string, unknown> = { limit: PAGE_SIZE };
      if (state.filter) body['filter'] = state.filter;
      if (state.sort) body['sort'] = [state.sort];
      const cursor = state.cursors[state.page];
      if (cursor) body['cursor'] = cursor;
      const answer = await api<RecordOut[]>('POST', `/records/${seg(o.name)}/search`, body);
      if (mine !== latest) return;
      const next = answer.page?.nextCursor ?? null;
      state.cursors[state.page + 1] = next;
      state.cursors.length = state.page + 2;
      // The server counts on the first page only: later pages keep the count shown.
      if (answer.page?.total !== undefined || !cursor) replace(count, answer.page?.total !== undefined ? `${answer.page.total} records` : '');
      replace(tableArea, renderTable(o, state, answer.data, reload), pager(state, next !== null, reload));
      if (focusTable) tableArea.querySelector<HTMLElement>('table')?.focus();
    } catch (err) {
      if (mine === latest) replace(tableArea, errorNotice(err));
    } finally {
      if (mine === latest) tableArea.setAttribute('aria-busy', 'false');
    }
  };

  const filterForm = h(
    'form',
    { class: 'filters', 'aria-label': 'Filters' },
    h('div', { class: 'filter-grid' }, filterControls(attrs, state.inputs)),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Apply filters'), button('Clear filters', () => {
      state.inputs = {};
      state.filter = undefined;
      state.cursors = [null];
      state.page = 0;
      replace(filterForm.querySelector('.filter-grid')!, filterControls(attrs, state.inputs));
      void reload();
    })),
  );
  filterForm.addEventListener('submit', (e) => {
    e.preventDefault();
    state.filter = compileFilter(attrs, state.inputs);
    state.cursors = [null];
    state.page = 0;
    void reload();
  });

  const columnBoxes = attrs.map((a) => {
    const box = h('input', { type: 'checkbox', checked: state.columns.includes(a.name), name: `column-${a.name}` });
    box.addEventListener('change', () => {
      state.columns = attrs.filter((x) => (x === a ? box.checked : state.columns.includes(x.name))).map((x) => x.name);
      void reload();
    });
    return h('label', { class: 'check' }, box, labelOf(a));
  });

  main.append(
    pageHeading(`Records of ${o.label ?? o.name}`, ' ', count),
    h('p', { class: 'toolbar' }, link(`#/records/${seg(o.name)}/new`, 'New record', { class: 'button-link' }), ' ', link(`#/objects/${seg(o.name)}`, 'Attributes')),
    h('details', { class: 'panel', open: state.filter !== undefined }, h('summary', null, 'Filters'), filterForm),
    h('details', { class: 'panel' }, h('summary', null, 'Columns'), h('fieldset', { class: 'columns' }, h('legend', { class: 'sr-only' }, 'Columns shown'), columnBoxes)),
    tableArea,
  );
  await reload();
}

function renderTable(o: ObjectInfo, state: TableState, records: RecordOut[], reload: (focus?: boolean) => Promise<void>): HTMLElement {
  const shown = state.columns.map((n) => o.attributes.find((a) => a.name === n)).filter((a): a is Attribute => a !== undefined);
  if (records.length === 0) return notice('info', state.filter ? 'No records match these filters.' : 'No records yet.');
  const header = (a: Attribute) => {
    const current = state.sort?.attribute === a.name ? state.sort.direction : null;
    const sortable = a.type !== 'json' && a.type !== 'document' && !a.multiple && a.type !== 'multiselect';
    const th = h('th', { scope: 'col', 'aria-sort': current === 'asc' ? 'ascending' : current === 'desc' ? 'descending' : sortable ? 'none' : null });
    if (!sortable) th.append(labelOf(a));
    else
      th.append(
        button(`${labelOf(a)}${current === 'asc' ? ' ▲' : current === 'desc' ? ' ▼' : ''}`, () => {
          // Click cycles ascending → descending → the server's order; a new sort starts at page 1.
          // Read at click time: the table may not have been redrawn since the last click.
          const now = state.sort?.attribute === a.name ? state.sort.direction : null;
          state.sort = now === null ? { attribute: a.name, direction: 'asc' } : now === 'asc' ? { attribute: a.name, direction: 'desc' } : null;
          state.cursors = [null];
          state.page = 0;
          void reload();
        }, { class: 'sort', 'aria-label': `Sort by ${labelOf(a)}` }),
      );
    return th;
  };
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'records', tabIndex: -1 },
      h('caption', { class: 'sr-only' }, `Records of ${o.name}, page ${state.page + 1}`),
      h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Record'), shown.map(header))),
      h(
        'tbody',
        null,
        records.map((r) =>
          h(
            'tr',
            { 'data-id': r.id },
            h('td', null, link(`#/records/${seg(o.name)}/${seg(r.id)}`, r.id.slice(0, 8), { 'aria-label': `Open record ${r.id}`, class: 'mono' })),
            shown.map((a) => h('td', null, formatValue(r.values[a.name], a))),
          ),
        ),
      ),
    ),
  );
}

function pager(state: TableState, hasNext: boolean, reload: (focus?: boolean) => Promise<void>): HTMLElement {
  const go = (delta: number) => {
    state.page += delta;
    void reload(true);
  };
  return h(
    'nav',
    { class: 'pager', 'aria-label': 'Pages' },
    button('Previous page', () => go(-1), { disabled: state.page === 0 }),
    h('span', null, `Page ${state.page + 1}`),
    button('Next page', () => go(1), { disabled: !hasNext }),
  );
}
