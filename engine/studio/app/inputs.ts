import { api, seg } from './api.js';
import { h, newId, replace } from './dom.js';
import { labelOf } from './format.js';
import { objectNamed } from './schema.js';
import type { Attribute, RecordOut } from './types.js';

/**
 * One form control per attribute type (issue 20: select/multiselect choices, relation
 * pickers that search the target object, date/datetime inputs, a JSON editor). Each reads
 * back the value the API expects for its type, or says why it cannot (JSON that does not
 * parse), and shows the server's message for its field.
 */
export interface Control {
  attribute: Attribute;
  element: HTMLElement;
  /** The value to send; null when emptied. */
  read(): { ok: true; value: unknown } | { ok: false; message: string };
  showError(message: string | null): void;
  focus(): void;
}

/** datetime-local holds local wall time with no zone; the API holds UTC instants. */
function toLocalInput(iso: unknown): string {
  if (typeof iso !== 'string') return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

export function controlFor(a: Attribute, value: unknown): Control {
  const id = newId(`attr-${a.name}`);
  const errorId = `${id}-error`;
  const error = h('p', { class: 'field-error', id: errorId, hidden: true });
  const help = describe(a);
  const helpId = help ? `${id}-help` : null;
  let focusable: HTMLElement;
  let read: Control['read'];
  let body: HTMLElement;

  const described = <E extends HTMLElement>(el: E): E => {
    el.setAttribute('aria-describedby', [helpId, errorId].filter(Boolean).join(' '));
    return el;
  };

  switch (a.type) {
    case 'boolean': {
      const select = described(h('select', { id }, h('option', { value: '' }, '—'), h('option', { value: 'yes' }, 'yes'), h('option', { value: 'no' }, 'no')));
      select.value = value === true ? 'yes' : value === false ? 'no' : '';
      read = () => ({ ok: true, value: select.value === '' ? null : select.value === 'yes' });
      focusable = body = select;
      break;
    }
    case 'select': {
      const select = described(h('select', { id }, h('option', { value: '' }, '—'), (a.options ?? []).map((o) => h('option', { value: o }, o))));
      select.value = typeof value === 'string' ? value : '';
      read = () => ({ ok: true, value: select.value === '' ? null : select.value });
      focusable = body = select;
      break;
    }
    case 'multiselect': {
      const chosen = new Set(Array.isArray(value) ? (value as string[]) : []);
      const boxes = (a.options ?? []).map((o) => h('input', { type: 'checkbox', value: o, checked: chosen.has(o), name: `${a.name}-${o}` }));
      body = described(h('fieldset', { class: 'choices', id }, h('legend', { class: 'sr-only' }, labelOf(a)), boxes.map((b) => h('label', { class: 'check' }, b, b.value))));
      read = () => ({ ok: true, value: boxes.filter((b) => b.checked).map((b) => b.value) });
      focusable = boxes[0] ?? body;
      break;
    }
    case 'json': {
      const area = described(h('textarea', { id, rows: 5, spellcheck: false, class: 'mono' }));
      area.value = value === undefined || value === null ? '' : JSON.stringify(value, null, 2);
      read = () => {
        if (area.value.trim() === '') return { ok: true, value: null };
        try {
          return { ok: true, value: JSON.parse(area.value) as unknown };
        } catch (err) {
          return { ok: false, message: `not valid JSON: ${(err as Error).message}` };
        }
      };
      focusable = body = area;
      break;
    }
    case 'relation': {
      const picker = relationPicker(a, value, id, described);
      read = picker.read;
      body = picker.element;
      focusable = picker.input;
      break;
    }
    default: {
      const type = a.type === 'number' || a.type === 'integer' ? 'number' : a.type === 'date' ? 'date' : a.type === 'datetime' ? 'datetime-local' : a.type === 'email' ? 'email' : a.type === 'url' ? 'url' : 'text';
      const input = described(h('input', { id, type, step: a.type === 'number' ? 'any' : a.type === 'integer' ? '1' : a.type === 'datetime' ? '1' : null, spellcheck: false }));
      input.value = a.type === 'datetime' ? toLocalInput(value) : value === null || value === undefined ? '' : String(value);
      read = () => {
        const raw = input.value;
        if (raw === '') {
          // A number input holding text the browser could not parse reads as '' too.
          if (type === 'number' && input.validity.badInput) return { ok: false, message: 'not a number' };
          return { ok: true, value: null };
        }
        if (type === 'number') return { ok: true, value: Number(raw) };
        if (a.type === 'datetime') return { ok: true, value: new Date(raw).toISOString() };
        return { ok: true, value: raw };
      };
      focusable = body = input;
    }
  }
  // "(required)" is outside the label element, so the control's name stays the attribute's label.
  const label = h('div', null, a.type === 'multiselect' ? h('span', { class: 'label', id: `${id}-label` }, labelOf(a)) : h('label', { for: id }, labelOf(a)), a.required ? h('span', { class: 'req' }, ' (required)') : null);
  if (a.type === 'multiselect') body.setAttribute('aria-labelledby', `${id}-label`);
  const element = h('div', { class: 'field', 'data-attribute': a.name }, label, body, help ? h('p', { class: 'help', id: helpId }, help) : null, error);
  return {
    attribute: a,
    element,
    read,
    showError(message) {
      error.hidden = message === null;
      replace(error, message ?? '');
      for (const el of element.querySelectorAll('input, select, textarea, fieldset')) {
        if (message) el.setAttribute('aria-invalid', 'true');
        else el.removeAttribute('aria-invalid');
      }
    },
    focus: () => focusable.focus(),
  };
}

function describe(a: Attribute): string {
  const parts: string[] = [a.type];
  if (a.description) parts.push(a.description);
  if (a.min !== undefined) parts.push(`at least ${a.min}`);
  if (a.max !== undefined) parts.push(`at most ${a.max}`);
  if (a.maxLength !== undefined) parts.push(`up to ${a.maxLength} characters`);
  if (a.type === 'datetime') parts.push('your local time');
  return parts.join(' · ');
}

/** A short name for a record of `target`: its first text-like value, else its id. */
export function recordTitle(r: RecordOut, attributes: Attribute[]): string {
  for (const a of attributes) {
    if (a.system || !['text', 'email', 'select', 'url'].includes(a.type)) continue;
    const v = r.values[a.name];
    if (typeof v === 'string' && v !== '') return v;
  }
  return r.id;
}

/**
 * A relation picker: type to search the target object (its first text attribute,
 * `contains`), pick from the matches; chosen records show by name with a remove button.
 */
function relationPicker(a: Attribute, value: unknown, id: string, described: <E extends HTMLElement>(el: E) => E) {
  const chosen: string[] = Array.isArray(value) ? [...(value as string[])] : typeof value === 'string' ? [value] : [];
  const names = new Map<string, string>();
  const input = described(h('input', { id, type: 'search', autocomplete: 'off', placeholder: `Search ${a.target ?? ''}…`, role: 'combobox', 'aria-expanded': 'false' }));
  const listId = `${id}-list`;
  input.setAttribute('aria-controls', listId);
  const results = h('ul', { class: 'picker-results', id: listId, role: 'listbox', 'aria-label': `Matches in ${a.target ?? ''}` });
  const chips = h('ul', { class: 'chips', 'aria-label': `Chosen ${labelOf(a)}` });

  const renderChips = () => {
    replace(
      chips,
      chosen.map((rid) =>
        h('li', { class: 'chip', 'data-id': rid }, names.get(rid) ?? rid, ' ', h('button', { type: 'button', 'aria-label': `Remove ${names.get(rid) ?? rid}`, on: { click: () => { chosen.splice(chosen.indexOf(rid), 1); renderChips(); } } }, '×')),
      ),
    );
  };
  const pick = (rid: string, title: string) => {
    names.set(rid, title);
    if (a.multiple) {
      if (!chosen.includes(rid)) chosen.push(rid);
    } else chosen.splice(0, chosen.length, rid);
    renderChips();
    replace(results);
    input.value = '';
    input.setAttribute('aria-expanded', 'false');
    input.focus();
  };

  let seq = 0;
  const search = async () => {
    const mine = ++seq;
    const target = a.target ? await objectNamed(a.target) : undefined;
    if (!target) return;
    const key = target.attributes.find((x) => !x.system && ['text', 'email'].includes(x.type));
    const q = input.value.trim();
    const body: Record<string, unknown> = { limit: 10 };
    if (q && key) body['filter'] = { [key.name]: { contains: q } };
    try {
      const answer = await api<RecordOut[]>('POST', `/records/${seg(target.name)}/search`, body);
      if (mine !== seq) return;
      replace(
        results,
        answer.data.map((r) => {
          const title = recordTitle(r, target.attributes);
          return h('li', { role: 'option' }, h('button', { type: 'button', 'data-id': r.id, on: { click: () => pick(r.id, title) } }, title, r.id === title ? '' : h('span', { class: 'muted' }, ` ${r.id.slice(0, 8)}`)));
        }),
      );
      input.setAttribute('aria-expanded', String(answer.data.length > 0));
    } catch (err) {
      replace(results, h('li', { class: 'field-error' }, (err as Error).message));
    }
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  input.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => void search(), 150);
  });
  input.addEventListener('focus', () => {
    if (results.childElementCount === 0) void search();
  });
  input.addEventListener('keydown', (e) => {
    if (e.key === 'ArrowDown') {
      e.preventDefault();
      results.querySelector<HTMLButtonElement>('button')?.focus();
    } else if (e.key === 'Escape') replace(results);
  });
  results.addEventListener('keydown', (e) => {
    const buttons = [...results.querySelectorAll<HTMLButtonElement>('button')];
    const at = buttons.indexOf(document.activeElement as HTMLButtonElement);
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      buttons[Math.max(0, Math.min(buttons.length - 1, at + (e.key === 'ArrowDown' ? 1 : -1)))]?.focus();
    } else if (e.key === 'Escape') {
      replace(results);
      input.focus();
    }
  });

  // Name the records already chosen, so the chips read as names, not ids.
  if (chosen.length > 0 && a.target) {
    void (async () => {
      const target = await objectNamed(a.target!);
      if (!target) return;
      const found = await Promise.all(chosen.map((rid) => api<RecordOut>('GET', `/records/${seg(target.name)}/${seg(rid)}`).then((r) => r.data, () => null)));
      for (const r of found) if (r) names.set(r.id, recordTitle(r, target.attributes));
      renderChips();
    })();
  }
  renderChips();
  return {
    element: h('div', { class: 'picker' }, chips, input, results),
    input,
    read: (): { ok: true; value: unknown } => ({ ok: true, value: a.multiple ? [...chosen] : (chosen[0] ?? null) }),
  };
}

