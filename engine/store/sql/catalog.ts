import { ServiceError } from '../../errors.js';
import { quoteName } from '../../model/names.js';
import type { StoredObject } from '../../model/stored.js';
import type { Backend, Executor } from '../port.js';
import { loadObjects } from './catalog-rows.js';
import { relationTarget } from '../../model/types/registry.js';

/**
 * The object cache: every object with its attributes, read once and kept current by the
 * schema writes of this process. How it stays true:
 * - another process may change the schema: every store call starts by reading the backend's
 *   catalog token (engine/store/port.ts Backend.catalogToken) in its own transaction, and the
 *   cache serves that call only if it was read under the same token — else the call reads
 *   the catalogue in its own snapshot. So a call always works on the schema of the snapshot
 *   it writes in, even when calls with older and newer snapshots run at once (one that began
 *   before another process's push may read the catalogue after a newer call has: what it
 *   reads is not kept then, it would be older than the cache);
 * - a write transaction works on its own view (`begin`): a schema write changes only that
 *   view (copy on first write; StoredObjects are replaced, never mutated), which is
 *   published to the process when the transaction commits and thrown away when it rolls
 *   back or is retried. So no other call, even one running at the same time on a backend
 *   with concurrent transactions, sees an uncommitted schema, and nothing of an undone one
 *   survives.
 * - `cached` hands out the cache with the token it was read under, for a write that checks
 *   the token in the statement that writes (Backend.insertIfCatalog, lone-create.ts).
 */
export class Catalog {
  private cache: Map<string, StoredObject> | null = null;
  /**
   * The catalog token the cache was read under (a view: the token its transaction began
   * with). Undefined: not known, the cache serves no call (only the setup's calls, which
   * read no token, load without one, and the setup forgets what they loaded).
   */
  private cacheToken: unknown = undefined;
  /** The token each store call read in its transaction (`refresh`), by that call's executor. */
  private readonly tokens = new WeakMap<Executor, unknown>();
  /** This view copied or dropped the parent's map: `publish` hands it over. */
  private own = false;
  private changed = false;

  constructor(
    private readonly backend: Backend,
    private readonly parent?: Catalog,
    /** A view: the token its transaction read (what its schema is based on). */
    private readonly baseToken?: unknown,
  ) {}

  /** At the start of every store call on the process's catalog, in the call's transaction. */
  async refresh(ex: Executor): Promise<void> {
    const token = await this.backend.catalogToken(ex);
    this.tokens.set(ex, token);
    if (token !== this.cacheToken) {
      this.cache = null;
      this.cacheToken = undefined;
    }
  }

  /** Read everything again at the next call (the setup on open may have changed it). */
  forget(): void {
    this.cache = null;
    this.cacheToken = undefined;
  }

  /** The view a write transaction (`tx`, refreshed) works on. */
  begin(tx: Executor): Catalog {
    return new Catalog(this.backend, this, this.tokens.get(tx));
  }

  /**
   * The transaction is about to commit: if it changed the schema, the process's cache goes
   * now, while the transaction still holds the connection (SQLite) — no call can then read
   * the schema as it was before this transaction once it has committed.
   */
  retire(): void {
    if (this.parent && this.changed) this.parent.forget();
  }

  /**
   * The transaction committed: its view becomes the process's cache, unless another call
   * loaded the catalogue since (that copy is as new: it was read after the commit). It is
   * kept under the token the transaction began with: a backend whose token moves with this
   * commit (PostgreSQL's catalog_version, which the commit bumped) reads the catalogue again
   * at the next call; one whose token moves only with other connections' commits (SQLite's
   * data_version) keeps it.
   */
  publish(): void {
    if (!this.parent || !this.changed || this.parent.cache !== null) return;
    this.parent.cache = this.cache;
    this.parent.cacheToken = this.cache ? this.baseToken : undefined;
  }

  /**
   * The process's cache and the token it was read under, without I/O; undefined when there is
   * none that a token vouches for.
   */
  cached(): { objects: ReadonlyMap<string, StoredObject>; token: unknown } | undefined {
    if (this.parent || this.cache === null || this.cacheToken === undefined) return undefined;
    return { objects: this.cache, token: this.cacheToken };
  }

  /** The objects the process's cache holds, whatever token it was read under (advisory: write-policy.ts schemaWrite). */
  knownNames(): string[] {
    return this.cache ? [...this.cache.keys()] : [];
  }

  async objects(ex: Executor): Promise<Map<string, StoredObject>> {
    if (this.parent) {
      if (this.cache) return this.cache;
      if (!this.own) return this.parent.objects(ex);
      this.cache = await loadObjects(ex);
      return this.cache;
    }
    const token = this.tokens.get(ex);
    if (this.cache && token !== undefined && token === this.cacheToken) return this.cache;
    const loaded = await loadObjects(ex);
    // Kept when there is no cache; a call whose token differs from the cache's (its snapshot
    // older or newer) keeps its copy to itself — a newer token drops the cache at the next
    // call's `refresh`.
    if (this.cache === null && token !== undefined) {
      this.cache = loaded;
      this.cacheToken = token;
    }
    return loaded;
  }

  async list(ex: Executor): Promise<StoredObject[]> {
    return [...(await this.objects(ex)).values()];
  }

  async find(ex: Executor, idOrName: string): Promise<StoredObject | undefined> {
    return findObject(await this.objects(ex), idOrName);
  }

  async require(ex: Executor, idOrName: string): Promise<StoredObject> {
    const o = await this.find(ex, idOrName);
    if (!o) throw new ServiceError('SCHEMA_OBJECT_NOT_FOUND', `Object ${quoteName(idOrName)} does not exist`);
    return o;
  }

  /**
   * After a write to one object's schema (inside its transaction): re-read only that object
   * (a 1,000-object push must not re-read the whole catalogue per step), keeping its place.
   */
  async objectChanged(tx: Executor, objectId: string): Promise<void> {
    const cache = await this.writable(tx);
    if (!cache) return;
    const fresh = await loadObjects(tx, objectId);
    for (const [name, o] of cache) if (o.id === objectId && fresh.has(name)) cache.set(name, fresh.get(name)!);
    for (const [name, o] of cache) if (o.id === objectId && !fresh.has(name)) cache.delete(name);
    for (const [name, o] of fresh) if (!cache.has(name)) cache.set(name, o);
  }

  /** An object dropped inside the current transaction. */
  async dropped(tx: Executor, name: string): Promise<void> {
    (await this.writable(tx))?.delete(name);
  }

  /** Several objects changed (a rename): read everything again, still inside the transaction. */
  async changedMany(tx: Executor): Promise<void> {
    await this.writable(tx);
    this.cache = null;
    this.own = true;
  }

  /**
   * This view's own map, copied from the parent's on the first schema change of the
   * transaction (null: nothing loaded yet, the next read loads). The first change also bumps
   * `_ss_meta` 'catalog_version', which a backend may answer as its catalog token, so every
   * other process reads the catalogue again once this commits.
   */
  private async writable(tx: Executor): Promise<Map<string, StoredObject> | null> {
    if (!this.changed) {
      this.changed = true;
      await tx.run(
        "INSERT INTO _ss_meta (key, value) VALUES ('catalog_version', '1') ON CONFLICT(key) DO UPDATE SET value = CAST(CAST(_ss_meta.value AS INTEGER) + 1 AS TEXT)",
      );
    }
    if (!this.own) {
      this.own = true;
      const base = this.parent?.cache;
      this.cache = base ? new Map(base) : null;
    }
    return this.cache;
  }

  /** Relation attributes of other objects that target `object`, as `object.attribute`. */
  async referencesTo(ex: Executor, object: string): Promise<string[]> {
    const refs: string[] = [];
    for (const o of (await this.objects(ex)).values()) {
      if (o.name === object) continue;
      for (const a of o.attributes) if (relationTarget(a) === object) refs.push(`${o.name}.${a.name}`);
    }
    return refs;
  }
}

/** An object by name, else by id (the routes' `:objectName` / `:objectId` accept either). */
export function findObject(objects: ReadonlyMap<string, StoredObject>, idOrName: string): StoredObject | undefined {
  const byName = objects.get(idOrName);
  if (byName) return byName;
  for (const o of objects.values()) if (o.id === idOrName) return o;
  return undefined;
}
