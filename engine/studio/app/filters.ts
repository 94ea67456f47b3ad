import { field, h, newId } from './dom.js';
import { labelOf } from './format.js';
import type { Attribute, Filter } from './types.js';

/**
 * Filters built from the attribute types (issue 20): text contains, number and date
 * ranges, select options, yes/no. What the user typed is kept as raw strings per
 * attribute, and turned into the contract's filter grammar (§3) only when applied, so the
 * form can be rebuilt as it was when the user comes back to the table.
 */
export type FilterInputs = Record<string, { a?: string; b?: string }>;

type Kind = 'contains' | 'range' | 'choice' | 'has' | 'yesno';

function kindOf(a: Attribute): Kind | null {
  switch (a.type) {
    case 'text':
    case 'email':
    case 'url':
      return 'contains';
    case 'number':
    case 'integer':
    case 'date':
    case 'datetime':
      return 'range';
    case 'select':
      return 'choice';
    case 'multiselect':
      return 'has';
    case 'boolean':
      return 'yesno';
    default:
      return null; // relation, json, document: no filter a person could type here
  }
}

export const filterable = (a: Attribute): boolean => !a.system && kindOf(a) !== null;

/** datetime-local gives local wall time without a zone; the API compares UTC instants. */
const operand = (a: Attribute, raw: string): string | number => {
  if (a.type === 'number' || a.type === 'integer') return Number(raw);
  if (a.type === 'datetime') return new Date(raw).toISOString();
  return raw;
};

export function compileFilter(attributes: Attribute[], inputs: FilterInputs): Filter | undefined {
  const parts: Filter[] = [];
  for (const a of attributes) {
    const input = inputs[a.name];
    if (!input || !filterable(a)) continue;
    const first = input.a?.trim() ?? '';
    const second = input.b?.trim() ?? '';
    switch (kindOf(a)) {
      case 'contains':
        if (first) parts.push({ [a.name]: { contains: first } });
        break;
      case 'range':
        if (first) parts.push({ [a.name]: { gte: operand(a, first) } });
        if (second) parts.push({ [a.name]: { lte: operand(a, second) } });
        break;
      case 'choice':
        if (first) parts.push({ [a.name]: first });
        break;
      case 'has':
        if (first) parts.push({ [a.name]: { contains: first } });
        break;
      case 'yesno':
        if (first) parts.push({ [a.name]: first === 'yes' });
        break;
    }
  }
  if (parts.length === 0) return undefined;
  return parts.length === 1 ? parts[0] : { and: parts };
}

const rangeType = (a: Attribute): string => (a.type === 'date' ? 'date' : a.type === 'datetime' ? 'datetime-local' : 'number');

/** The controls for every filterable attribute, reading into and out of `inputs`. */
export function filterControls(attributes: Attribute[], inputs: FilterInputs): HTMLElement[] {
  const bind = (name: string, which: 'a' | 'b', el: HTMLInputElement | HTMLSelectElement) => {
    el.value = inputs[name]?.[which] ?? '';
    el.name = `filter-${name}-${which}`;
    el.addEventListener('change', () => {
      inputs[name] = { ...inputs[name], [which]: el.value };
    });
    el.addEventListener('input', () => {
      inputs[name] = { ...inputs[name], [which]: el.value };
    });
    return el;
  };
  const choices = (options: string[], any: string) => [h('option', { value: '' }, any), ...options.map((o) => h('option', { value: o }, o))];
  return attributes.filter(filterable).map((a) => {
    const label = labelOf(a);
    switch (kindOf(a)) {
      case 'contains':
        return field(`${label} contains`, bind(a.name, 'a', h('input', { type: 'search' })));
      case 'range': {
        const step = a.type === 'number' ? 'any' : undefined;
        const from = bind(a.name, 'a', h('input', { type: rangeType(a), step, id: newId('from') }));
        const to = bind(a.name, 'b', h('input', { type: rangeType(a), step, id: newId('to') }));
        return h(
          'fieldset',
          { class: 'range' },
          h('legend', null, label),
          h('label', { for: from.id }, a.type === 'date' || a.type === 'datetime' ? 'from' : 'at least'),
          from,
          h('label', { for: to.id }, a.type === 'date' || a.type === 'datetime' ? 'to' : 'at most'),
          to,
        );
      }
      case 'choice':
        return field(label, bind(a.name, 'a', h('select', null, choices(a.options ?? [], '(any)'))));
      case 'has':
        return field(`${label} has`, bind(a.name, 'a', h('select', null, choices(a.options ?? [], '(any)'))));
      default:
        return field(label, bind(a.name, 'a', h('select', null, h('option', { value: '' }, '(any)'), h('option', { value: 'yes' }, 'yes'), h('option', { value: 'no' }, 'no'))));
    }
  });
}
