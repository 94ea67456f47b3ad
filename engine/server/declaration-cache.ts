import { isPlainObject } from '../declaration/diagnostic.js';
import { validateDeclaration, type ValidationResult } from '../declaration/validate.js';
import type { Declaration } from '../model/declaration.js';
import { sameJson } from '../model/same-json.js';

/** Sources whose last valid declaration a server remembers (one entry each). */
const REMEMBERED_SOURCES = 8;

interface Remembered {
  raw: Record<string, unknown>;
  result: ValidationResult<Declaration>;
}

/**
 * Validation of pushed declarations (PUT /schema/sources/:id), remembering each source's
 * last valid one. A client re-sends the whole declaration on every push (contract.md §3),
 * usually with one object changed; checking all of a 1.5 MB declaration again costs ~20 ms
 * of the issue 4 budget ("the one-attribute change applied in < 100 ms on the server").
 *
 * Why checking only what changed gives the same errors: validateDeclaration is pure, and
 * its checks of one object read only that object and the SET of object names (relation
 * targets, renamedFrom); a view's checks read the view and the object it lists. So when
 * the object names (in order) and the views are unchanged, the full run's errors are the
 * run over: every changed object, every object a view lists, the views, and a bare valid
 * stand-in for each other object (keeping the name set). The stand-ins are valid and so
 * were the real ones last time, so they add no error either way. Anything else (names
 * added, removed or reordered, views changed, extra top-level keys such as roles) is validated whole.
 * Bodies are parsed per request and never changed after, so remembering them is safe.
 */
export class DeclarationCheck {
  private last = new Map<string, Remembered>();

  /** `storedObjects`: what role permissions may name besides declared objects (a declaration with roles is always checked whole). */
  validate(sourceId: string, raw: Record<string, unknown>, storedObjects?: () => ReadonlySet<string>): ValidationResult<Declaration> {
    const known = this.last.get(sourceId);
    const result = (known && changedOnly(known, raw)) ?? validateDeclaration(raw, raw['roles'] !== undefined && storedObjects ? { storedObjects: storedObjects() } : {});
    if (result.value && !result.diagnostics.some((d) => d.severity === 'error')) {
      this.last.delete(sourceId);
      this.last.set(sourceId, { raw, result });
      if (this.last.size > REMEMBERED_SOURCES) this.last.delete(this.last.keys().next().value!);
    }
    return result;
  }
}

/** The result from checking only what changed since `known`, or undefined when that is not provably the same. */
function changedOnly(known: Remembered, raw: Record<string, unknown>): ValidationResult<Declaration> | undefined {
  const before = known.raw;
  const value = known.result.value;
  if (!value || Object.keys(raw).length !== 2 || Object.keys(before).length !== 2) return undefined;
  const objects = raw['objects'];
  const views = raw['views'];
  const prevObjects = before['objects'];
  if (!isPlainObject(objects) || !isPlainObject(views) || !isPlainObject(prevObjects)) return undefined;
  const names = Object.keys(objects);
  const prevNames = Object.keys(prevObjects);
  if (names.length !== prevNames.length || names.some((n, i) => n !== prevNames[i])) return undefined;
  if (!sameJson(views, before['views'])) return undefined;
  const viewed = new Set<unknown>(Object.values(views).map((v) => (isPlainObject(v) ? v['object'] : undefined)));
  const subset: Record<string, unknown> = {};
  const standIn = new Set<string>();
  let changed = 0;
  for (const n of names) {
    const same = sameJson(objects[n], prevObjects[n]);
    if (!same) changed++;
    if (same && !viewed.has(n)) {
      standIn.add(n);
      subset[n] = { attributes: {} };
    } else subset[n] = objects[n];
  }
  if (changed === 0) return known.result;
  const sub = validateDeclaration({ objects: subset, views });
  if (!sub.value) return sub; // errors: the same the whole declaration gives (see above)
  const merged: Declaration['objects'] = {};
  // an unchanged object's normalised value is the one remembered (same input, pure function)
  for (const n of names) merged[n] = standIn.has(n) ? value.objects[n]! : sub.value.objects[n]!;
  return { value: { objects: merged, views: sub.value.views }, diagnostics: sub.diagnostics };
}
