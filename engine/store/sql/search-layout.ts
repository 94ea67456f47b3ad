import type { AttributeSpec } from '../../model/attribute.js';
import type { StoredAttribute, StoredObject } from '../../model/stored.js';
import { isTextLike } from '../../model/types/registry.js';

/**
 * The search index's record rows, as both backends lay them out: one row per record, the
 * text of each indexed attribute in the order the object's layout lists (kept in
 * `_ss_search_layout`), joined by the separator (search-text.ts JOIN). This file holds the
 * rules both follow: which attributes are indexed, and which schema change leaves the rows
 * as they are and which makes them again from the table.
 */

// Which attributes are indexed is the registry's `fullText` (contract.md §3: text-like).
export const isIndexed = (a: StoredAttribute): boolean => !a.system && isTextLike(a);
export const textAttributes = (o: StoredObject): AttributeSpec[] => o.attributes.filter(isIndexed);

/** The specs of a layout's names in `o`: every one must be a text-like attribute of it. */
export function layoutAttributes(o: StoredObject, names: readonly string[]): AttributeSpec[] {
  const indexed = textAttributes(o);
  return names.map((n) => {
    const a = indexed.find((x) => x.name === n);
    if (!a) throw new Error(`the search layout of ${o.name} names ${n}, which is not an indexed attribute`);
    return a;
  });
}

/** A layout as `_ss_search_layout.attributes` holds it (a JSON list of names). */
export function parseLayout(object: string, stored: unknown): string[] {
  const names: unknown = typeof stored === 'string' ? JSON.parse(stored) : undefined;
  if (!Array.isArray(names) || !names.every((n) => typeof n === 'string')) throw new Error(`the search layout of ${object} is unreadable: delete _ss_meta.search_layout to rebuild the index`);
  return names;
}

/**
 * What schema changes left to do to one object's rows: `stored` is the layout they are
 * written by, `rebuild` says they must be made again from the table (an indexed attribute was
 * renamed, retyped, dropped, or the object is new), `appended` lists text attributes added
 * since, which join the end of the layout with no rebuild while the table holds no text in
 * them (a new column without a default is empty: adding a text attribute to 100,000 records
 * writes no index row).
 */
export interface PendingLayout {
  stored: string[];
  rebuild: boolean;
  appended: string[];
}

export const pendingLayout = (stored: readonly string[] | undefined): PendingLayout => ({ stored: [...(stored ?? [])], rebuild: false, appended: [] });

/**
 * After an object was created or one of its attributes added, changed, renamed or dropped
 * (`o` as it is now): what that makes stale. A change of an indexed attribute (its name,
 * type, values) rebuilds: the hook is not told whether the values changed.
 */
export function noteLayoutChange(p: PendingLayout, o: StoredObject, oldName: string | undefined, newName: string | undefined): void {
  const now = newName === undefined ? undefined : o.attributes.find((a) => a.name === newName);
  const indexedNow = now !== undefined && isIndexed(now);
  if (oldName === undefined && newName === undefined) p.rebuild = true; // a new object
  else if (oldName !== undefined && (p.stored.includes(oldName) || p.appended.includes(oldName))) p.rebuild = true;
  else if (indexedNow && oldName === undefined) p.appended.push(now.name);
  else if (indexedNow) p.rebuild = true; // became text-like: its converted values are there
}

/**
 * The layout `o`'s rows keep after the changes `p` noted, or null when they must be made
 * again from the table (whose order of text attributes then becomes the layout). Rows of the
 * stored layout stay when nothing but new attributes was appended to it, and only while
 * those hold no text: the caller checks `mustBeEmpty` against the table and rebuilds if any
 * holds some.
 */
export function keptLayout(p: PendingLayout, o: StoredObject): { layout: string[]; mustBeEmpty: string[] } | null {
  const names = textAttributes(o).map((a) => a.name);
  const unlisted = names.filter((n) => !p.stored.includes(n));
  if (p.rebuild || !p.stored.every((n) => names.includes(n)) || !unlisted.every((n) => p.appended.includes(n))) return null;
  return { layout: [...p.stored, ...unlisted], mustBeEmpty: unlisted };
}
