import { closest } from '../declaration/suggest.js';
import { validateDeclaration } from '../declaration/validate.js';
import { ServiceError, type FieldError } from '../errors.js';
import type { AttributeDecl, ViewDecl } from '../model/declaration.js';
import { quoteName } from '../model/names.js';
import type { StoredObject, StoredView } from '../model/stored.js';
import { renameViewAttribute, viewAttributes } from '../model/view-refs.js';
import { storedSpec } from '../plan/attributes.js';
import { loadViews } from './catalog.js';
import { now, type Db } from './db.js';

/**
 * Views at runtime (contract.md §3 "Roles, keys, views"): PUT|DELETE /views/:name for
 * views no source owns, and the rules that keep every view valid when the schema under
 * it changes (issue 16: "never left broken"). Runs inside the caller's transaction.
 */
interface ViewHost {
  db: Db;
  requireObject(idOrName: string): StoredObject;
}

/** The one check of a view body: the declaration rules, against the stored object. */
export function checkRuntimeView(name: string, body: ViewDecl, objects: readonly StoredObject[]): ViewDecl {
  const object = objects.find((o) => o.name === body.object);
  if (!object) {
    const near = closest(body.object, objects.map((o) => o.name));
    const message = `no object named ${quoteName(body.object)}${near ? ` (did you mean "${near}"?)` : ''}`;
    throw new ServiceError('SCHEMA_VALIDATION_FAILED', `The view's ${message}`, { errors: [{ path: ['object'], message }] });
  }
  const attributes: Record<string, AttributeDecl> = {};
  for (const a of object.attributes) {
    if (a.system) continue;
    const { name: _n, ...decl } = storedSpec(a);
    attributes[a.name] = decl as AttributeDecl;
  }
  const result = validateDeclaration({ objects: { [object.name]: { attributes } }, views: { [name]: body } });
  const base = ['views', name];
  const errors: FieldError[] = result.diagnostics
    .filter((d) => d.severity === 'error' && base.every((p, i) => d.path[i] === p))
    .map((d) => ({ path: d.path.slice(2), message: d.message + (d.suggestion ? ` (did you mean "${d.suggestion}"?)` : '') }));
  if (errors.length > 0) {
    throw new ServiceError('SCHEMA_VALIDATION_FAILED', errors.length === 1 ? errors[0]!.message : `${errors.length} problems in the view`, { errors });
  }
  return body;
}

function findView(db: Db, name: string): StoredView | undefined {
  return loadViews(db).find((v) => v.name === name);
}

/** A view a source pushed is the source's: runtime routes may not change it (contract §3). */
function refuseSourceOwned(view: StoredView | undefined): void {
  if (view && view.owner.kind !== 'runtime') {
    const who = view.owner.kind === 'source' ? `source "${view.owner.id ?? ''}"` : view.owner.kind;
    throw new ServiceError('SCHEMA_DUPLICATE', `The view "${view.name}" is owned by ${who}; change it in that source's declaration`);
  }
}

export function putRuntimeView(host: ViewHost, name: string, decl: ViewDecl): StoredView {
  refuseSourceOwned(findView(host.db, name));
  const t = now();
  host.db
    .prepare(
      "INSERT INTO _ss_views (name, decl, owner_kind, owner_id, created_at, updated_at) VALUES (?, ?, 'runtime', NULL, ?, ?) " +
        'ON CONFLICT(name) DO UPDATE SET decl = excluded.decl, updated_at = excluded.updated_at',
    )
    .run(name, JSON.stringify(decl), t, t);
  return findView(host.db, name)!;
}

export function deleteRuntimeView(host: ViewHost, name: string): void {
  const view = findView(host.db, name);
  if (!view) throw viewNotFound(name);
  refuseSourceOwned(view);
  host.db.prepare('DELETE FROM _ss_views WHERE name = ?').run(name);
}

/**
 * The spec has no view-not-found code; a view is a named schema entity, so the schema's
 * not-found code answers (404 either way), as GET /views/:name always has.
 */
export function viewNotFound(name: string): ServiceError {
  return new ServiceError('SCHEMA_OBJECT_NOT_FOUND', `No view named "${name}"`);
}

/** Names of the views that read `object` (or only its `attribute`). */
export function viewsReading(db: Db, object: string, attribute?: string): string[] {
  return loadViews(db)
    .filter((v) => v.object === object && (attribute === undefined || viewAttributes(v).has(attribute)))
    .map((v) => v.name);
}

/** A runtime drop of what views read is refused, naming them (a push gets a plan conflict instead). */
export function refuseIfViewsRead(db: Db, object: string, attribute?: string): void {
  const names = viewsReading(db, object, attribute);
  if (names.length === 0) return;
  const what = attribute === undefined ? `Object "${object}"` : `Attribute "${object}.${attribute}"`;
  const list = names.map((n) => `"${n}"`).join(', ');
  throw new ServiceError('SCHEMA_CONFLICT', `${what} is read by view${names.length === 1 ? '' : 's'} ${list}; change or delete ${names.length === 1 ? 'it' : 'them'} first`, {
    fix: `schemasync views delete ${names[0]}`,
  });
}

/** A renamed attribute: every view that named it names the new name, keeping its owner. */
export function renameAttributeInViews(db: Db, object: string, from: string, to: string): void {
  const update = db.prepare('UPDATE _ss_views SET decl = ?, updated_at = ? WHERE name = ?');
  for (const v of loadViews(db)) {
    if (v.object !== object) continue;
    const { name, owner: _o, ...decl } = v;
    const next = renameViewAttribute(decl, from, to);
    if (next) update.run(JSON.stringify(next), now(), name);
  }
}
