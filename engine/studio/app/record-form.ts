import { api, ApiError, seg } from './api.js';
import { documentsSection } from './documents.js';
import { h, notice, replace } from './dom.js';
import { formatValue, labelOf } from './format.js';
import { controlFor, type Control } from './inputs.js';
import { objectNamed } from './schema.js';
import { button, describeError, link, pageHeading } from './ui.js';
import type { Attribute, ObjectInfo, RecordOut } from './types.js';

/**
 * The record form (issue 20), generated from the attribute types. Edits send only the
 * fields the user changed, with `if-match` set to the version the form was loaded from
 * (contract.md §3): when someone else saved meanwhile the server answers 409 and the page
 * shows both versions, letting the user re-apply their changes on the new version — never
 * silently over it.
 */
const editable = (a: Attribute) => !a.system && !a.protected && a.type !== 'document';

/** Unset, null and an empty list are one "nothing" to a form, so an untouched empty list is no change. */
const norm = (v: unknown) => (v === undefined || (Array.isArray(v) && v.length === 0) ? null : v);
const same = (x: unknown, y: unknown) => JSON.stringify(norm(x)) === JSON.stringify(norm(y));

export async function recordPage(main: HTMLElement, [name = '', id = '']: string[]): Promise<void> {
  const o = await objectNamed(name);
  if (!o) {
    main.append(pageHeading('Object not found'), notice('error', `No object named ${name} (or this key may not read it).`));
    return;
  }
  if (id === 'new') {
    main.append(pageHeading(`New ${o.label ?? o.name}`), recordForm(o, null).element);
    return;
  }
  const answer = await api<RecordOut>('GET', `/records/${seg(o.name)}/${seg(id)}`);
  const form = recordForm(o, answer.data);
  main.append(pageHeading(`${o.label ?? o.name} record`), h('p', { class: 'muted mono' }, `id ${answer.data.id}`), form.element);
  // An upload attaches the document to the record, which gives it a new version: the form
  // moves to that version, or its next save would meet a conflict of the user's own making.
  const documents = documentsSection(o, answer.data, async () => form.moveTo((await api<RecordOut>('GET', `/records/${seg(o.name)}/${seg(id)}`)).data));
  if (documents) main.append(documents);
}

function recordForm(o: ObjectInfo, loaded: RecordOut | null): { element: HTMLElement; moveTo(record: RecordOut): void } {
  let base = loaded; // the version edits are made against; moves forward after a conflict
  const controls: Control[] = o.attributes.filter(editable).map((a) => controlFor(a, loaded?.values[a.name] ?? (loaded ? undefined : a.default)));
  const status = h('div', { class: 'form-status', 'aria-live': 'polite' });
  const versionLine = h('p', { class: 'muted' }, loaded ? `version ${loaded.version}` : '');
  const form = h(
    'form',
    { class: 'record-form', noValidate: true, 'aria-label': loaded ? 'Edit record' : 'New record' },
    versionLine,
    controls.map((c) => c.element),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, loaded ? 'Save changes' : 'Create record'), link(`#/records/${seg(o.name)}`, 'Back to the table')),
    status,
  );

  /** The values to send: on create every filled field, on edit only what differs from what was loaded. */
  const collect = (): Record<string, unknown> | null => {
    const values: Record<string, unknown> = {};
    let bad: Control | null = null;
    for (const c of controls) {
      c.showError(null);
      const r = c.read();
      if (!r.ok) {
        c.showError(r.message);
        bad ??= c;
        continue;
      }
      const was = loaded?.values[c.attribute.name];
      if (loaded ? !same(r.value, was) : r.value !== null && !(Array.isArray(r.value) && r.value.length === 0)) values[c.attribute.name] = r.value;
    }
    if (bad) {
      bad.focus();
      return null;
    }
    return values;
  };

  const showFieldErrors = (err: ApiError) => {
    let first: Control | null = null;
    const general: string[] = [];
    for (const e of err.errors) {
      const c = controls.find((x) => x.attribute.name === e.path[0]);
      if (c) {
        c.showError(e.message);
        first ??= c;
      } else general.push(`${e.path.join('.')}: ${e.message}`);
    }
    replace(status, notice('error', describeError(err), general.length ? h('ul', null, general.map((g) => h('li', null, g))) : null));
    first?.focus();
  };

  const save = async (values: Record<string, unknown>): Promise<void> => {
    try {
      if (!base) {
        const created = await api<RecordOut>('POST', `/records/${seg(o.name)}`, values);
        location.hash = `#/records/${seg(o.name)}/${seg(created.data.id)}`;
        return;
      }
      const updated = await api<RecordOut>('PUT', `/records/${seg(o.name)}/${seg(base.id)}`, values, { 'if-match': `"${base.version}"` });
      base = updated.data;
      loaded = updated.data;
      replace(versionLine, `version ${updated.data.version}`);
      replace(status, notice('ok', `Saved: version ${updated.data.version}.`));
    } catch (err) {
      if (err instanceof ApiError && err.status === 409 && err.code === 'SCHEMA_CONFLICT' && base) {
        await showConflict(values);
        return;
      }
      if (err instanceof ApiError) showFieldErrors(err);
      else replace(status, notice('error', describeError(err)));
    }
  };

  /** Both versions side by side, and a choice: re-apply mine on theirs, or take theirs. */
  const showConflict = async (mine: Record<string, unknown>): Promise<void> => {
    const current = await api<RecordOut>('GET', `/records/${seg(o.name)}/${seg(base!.id)}`);
    const theirs = current.data;
    const names = o.attributes.filter((a) => editable(a) && (a.name in mine || !same(theirs.values[a.name], base!.values[a.name])));
    const panel = h(
      'section',
      { class: 'conflict', 'aria-labelledby': 'conflict-title' },
      h('h2', { id: 'conflict-title', tabIndex: -1 }, 'Someone else changed this record'),
      h('p', null, `You edited version ${base!.version}; it is now version ${theirs.version}. Nothing of yours was saved.`),
      h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          null,
          h('caption', { class: 'sr-only' }, 'Your changes and the stored version'),
          h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Attribute'), h('th', { scope: 'col' }, `Yours (on version ${base!.version})`), h('th', { scope: 'col' }, `Now stored (version ${theirs.version})`))),
          h(
            'tbody',
            null,
            names.map((a) =>
              h('tr', { 'data-attribute': a.name }, h('th', { scope: 'row' }, labelOf(a)), h('td', null, formatValue(a.name in mine ? mine[a.name] : base!.values[a.name], a)), h('td', null, formatValue(theirs.values[a.name], a))),
            ),
          ),
        ),
      ),
      h(
        'div',
        { class: 'actions' },
        button(`Apply my changes to version ${theirs.version}`, () => {
          base = theirs;
          loaded = theirs;
          replace(versionLine, `version ${theirs.version}`);
          replace(status);
          void save(mine);
        }),
        button('Discard mine and load theirs', () => {
          location.hash = `#/records/${seg(o.name)}/${seg(theirs.id)}?v=${theirs.version}`;
        }),
      ),
    );
    replace(status, panel);
    panel.querySelector<HTMLElement>('h2')?.focus();
  };

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    replace(status);
    const values = collect();
    if (!values) return;
    if (Object.keys(values).length === 0) {
      replace(status, notice('info', loaded ? 'Nothing changed.' : 'Fill in at least one field.'));
      return;
    }
    void save(values);
  });
  return {
    element: form,
    /** The record changed outside the form's fields (a document attached): edits now apply to this version. */
    moveTo(record) {
      base = record;
      loaded = record;
      replace(versionLine, `version ${record.version}`);
    },
  };
}
