import type { ViewDecl } from './declaration.js';
import type { Filter } from './filter.js';

/**
 * What a view names of its object (contract.md §3 "Views", issue 16: a view is never
 * left broken by a schema change). The one walk of a view's references, used by the
 * planner (a push that drops what a view reads is a conflict), the store (a runtime drop
 * is refused, a rename rewrites the view) and the view check of PUT /views/:name.
 */
const COMBINATORS = new Set(['and', 'or', 'not']);

function filterKeys(filter: Filter | undefined, out: Set<string>): void {
  if (typeof filter !== 'object' || filter === null || Array.isArray(filter)) return;
  for (const [key, value] of Object.entries(filter)) {
    if (key === 'not') filterKeys(value as Filter, out);
    else if (key === 'and' || key === 'or') for (const f of Array.isArray(value) ? value : []) filterKeys(f as Filter, out);
    else out.add(key);
  }
}

/** Every attribute name the view reads: its columns, sort and filter keys at any depth. */
export function viewAttributes(view: ViewDecl): Set<string> {
  const out = new Set<string>(view.columns ?? []);
  for (const s of view.sort ?? []) out.add(s.attribute);
  filterKeys(view.filter, out);
  return out;
}

function renameInFilter(filter: Filter, from: string, to: string): Filter {
  const out: Filter = {};
  for (const [key, value] of Object.entries(filter)) {
    if (key === 'not') out.not = renameInFilter(value as Filter, from, to);
    else if (key === 'and' || key === 'or') out[key] = (value as Filter[]).map((f) => renameInFilter(f, from, to));
    else if (!COMBINATORS.has(key)) out[key === from ? to : key] = value as Filter[keyof Filter];
  }
  return out;
}

/** The view with attribute `from` renamed to `to`, or undefined when it does not name it. */
export function renameViewAttribute(view: ViewDecl, from: string, to: string): ViewDecl | undefined {
  if (!viewAttributes(view).has(from)) return undefined;
  const next: ViewDecl = { ...view };
  if (view.columns) next.columns = view.columns.map((c) => (c === from ? to : c));
  if (view.sort) next.sort = view.sort.map((s) => (s.attribute === from ? { ...s, attribute: to } : s));
  if (view.filter) next.filter = renameInFilter(view.filter, from, to);
  return next;
}
