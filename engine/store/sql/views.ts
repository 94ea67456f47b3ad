import { closest } from '../../declaration/suggest.js';
import { validateDeclaration } from '../../declaration/validate.js';
import { ServiceError, type FieldError } from '../../errors.js';
import type { AttributeDecl, ViewDecl } from '../../model/declaration.js';
import { quoteName } from '../../model/names.js';
import type { Owner, StoredObject, StoredView } from '../../model/stored.js';
import { renameViewAttribute, viewAttributes } from '../../model/view-refs.js';
import { storedSpec } from '../../plan/attributes.js';
import type { Executor } from '../port.js';
import { loadViews } from './catalog-rows.js';
import { now } from './time.js';

/**
 * Views at runtime (contract.md §3 "Roles, keys, views"): PUT|DELETE /views/:name for
 * views no source owns, and the rules that keep every view valid when the schema under
 * it changes (issue 16: "never left broken"). Runs inside the caller's transaction.
 */
/** The one check of a view body: the declaration rules, against the stored object. */
export function checkRuntimeView(name: string, body: ViewDecl, objects: readonly StoredObject[]): ViewDecl {
  const object = objects.find((o) => o.name === body.object);
  if (!object) {
    const near = closest(body.object, objects.map((o) => o.name));
    const message = `no object named ${quoteName(body.object)}${near ? ` (did you mean "${near}"?)` : ''}`;
    throw new ServiceError('SCHEMA_VALIDATION_FAILED', `The view names an object that does not exist: ${message}`, { errors: [{ path: ['object'], message }] });
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

export async function findView(ex: Executor, name: string): Promise<StoredView | undefined> {
  return (await loadViews(ex)).find((v) => v.name === name);
}

/** A view a source pushed is the source's: runtime routes may not change it (contract §3). */
function refuseSourceOwned(view: StoredView | undefined): void {
  if (view && view.owner.kind !== 'runtime') {
    const who = view.owner.kind === 'source' ? `source "${view.owner.id ?? ''}"` : view.owner.kind;
    throw new ServiceError('SCHEMA_DUPLICATE', `The view "${view.name}" is owned by ${who}; change it in that source's declaration`);
  }
}

export async function putRuntimeView(tx: Executor, name: string, decl: ViewDecl): Promise<StoredView> {
  refuseSourceOwned(await findView(tx, name));
  const t = now();
  await tx.run(
    "INSERT INTO _ss_views (name, decl, owner_kind, owner_id, created_at, updated_at) VALUES (?, ?, 'runtime', NULL, ?, ?) " +
      'ON CONFLICT(name) DO UPDATE SET decl = excluded.decl, updated_at = excluded.updated_at',
    [name, JSON.stringify(decl), t, t],
  );
  return (await findView(tx, name))!;
}

export async function deleteRuntimeView(tx: Executor, name: string): Promise<void> {
  const view = await findView(tx, name);
  if (!view) throw viewNotFound(name);
  refuseSourceOwned(view);
  await dropView(tx, name);
}

/** A view as a source declares it (the plan applier): created or replaced, owned by `owner`. */
export async function upsertView(tx: Executor, name: string, decl: ViewDecl, owner: Owner): Promise<void> {
  const t = now();
  await tx.run(
    'INSERT INTO _ss_views (name, decl, owner_kind, owner_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?) ' +
      'ON CONFLICT(name) DO UPDATE SET decl = excluded.decl, owner_kind = excluded.owner_kind, owner_id = excluded.owner_id, updated_at = excluded.updated_at',
    [name, JSON.stringify(decl), owner.kind, owner.id ?? null, t, t],
  );
}

export async function dropView(tx: Executor, name: string): Promise<void> {
  await tx.run('DELETE FROM _ss_views WHERE name = ?', [name]);
}

/** An object renamed: views over it follow (contract.md §2: links by name follow renames). */
export async function renameObjectInViews(tx: Executor, from: string, to: string): Promise<void> {
  for (const v of await loadViews(tx)) {
    if (v.object !== from) continue;
    const { name, owner: _o, ...decl } = v;
    await tx.run('UPDATE _ss_views SET decl = ? WHERE name = ?', [JSON.stringify({ ...decl, object: to }), name]);
  }
}

/**
 * The spec has no view-not-found code; a view is a named schema entity, so the schema's
 * not-found code answers (404 either way), as GET /views/:name always has.
 */
export function viewNotFound(name: string): ServiceError {
  return new ServiceError('SCHEMA_OBJECT_NOT_FOUND', `No view named "${name}"`);
}

/** Names of the views that read `object` (or only its `attribute`). */
async function viewsReading(ex: Executor, object: string, attribute?: string): Promise<string[]> {
  return (await loadViews(ex))
    .filter((v) => v.object === object && (attribute === undefined || viewAttributes(v).has(attribute)))
    .map((v) => v.name);
}

/** A runtime drop of what views read is refused, naming them (a push gets a plan conflict instead). */
export async function refuseIfViewsRead(ex: Executor, object: string, attribute?: string): Promise<void> {
  const names = await viewsReading(ex, object, attribute);
  if (names.length === 0) return;
  const what = attribute === undefined ? `Object "${object}"` : `Attribute "${object}.${attribute}"`;
  const list = names.map((n) => `"${n}"`).join(', ');
  throw new ServiceError('SCHEMA_CONFLICT', `${what} is read by view${names.length === 1 ? '' : 's'} ${list}; change or delete ${names.length === 1 ? 'it' : 'them'} first`, {
    fix: `schemasync views delete ${names[0]}`,
  });
}

/** A renamed attribute: every view that named it names the new name, keeping its owner. */
export async function renameAttributeInViews(tx: Executor, object: string, from: string, to: string): Promise<void> {
  for (const v of await loadViews(tx)) {
    if (v.object !== object) continue;
    const { name, owner: _o, ...decl } = v;
    const next = renameViewAttribute(decl, from, to);
    if (next) await tx.run('UPDATE _ss_views SET decl = ?, updated_at = ? WHERE name = ?', [JSON.stringify(next), now(), name]);
  }
}
