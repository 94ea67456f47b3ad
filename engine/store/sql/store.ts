import { ServiceError } from '../../errors.js';
import { MAX_BULK_WRITE } from '../../model/limits.js';
import type { AttributePatch, AttributeSpec } from '../../model/attribute.js';
import type { Declaration, ViewDecl } from '../../model/declaration.js';
import { isBuiltinRole, type RoleDecl } from '../../model/roles.js';
import type { Owner } from '../../model/stored.js';
import type { Backend, Executor, TransactionOptions } from '../port.js';
import { endWholeBody, inWholeBody, savepoint, UniqueToName, type TransactionMarks, type WholeBody } from './nested-writes.js';
import type { Actor, BulkUpdateItem, CreateObjectInput, FilesApi, GlobalSearchInput, IdempotentAnswer, KeyGuard, PushOptions, RateCounter, Scope, SearchInput, Store, StoreTransactionOptions } from '../types.js';
import type { DataFacts } from '../../plan/facts.js';
import type { Plan } from '../../plan/types.js';
import { applyPlan } from './apply.js';
import { Catalog } from './catalog.js';
import { factsOver, probeFor } from './probe.js';
import { loadViews } from './catalog-rows.js';
import type { BlobStore } from '../blobs.js';
import type { Core } from './context.js';
import { FilesService } from './files-service.js';
import { listHistory } from './history.js';
import { Idempotency } from './idempotency.js';
import { loneCreate } from './lone-create.js';
import { Keys } from './keys.js';
import * as records from './records.js';
import * as roles from './roles.js';
import { addAttribute, deleteAttribute, updateAttribute } from './schema-attributes.js';
import { checkCreateObject, deleteObject, insertObject } from './schema-objects.js';
import { searchRecords } from './search.js';
import { pushSource } from './sources.js';
import { SourceCache } from './sources-cache.js';
import { RECORD_WRITE, schemaWrite } from './write-policy.js';
import { RecentRead } from './recent-read.js';
import { checkRuntimeView, deleteRuntimeView, findView, putRuntimeView, viewNotFound } from './views.js';

/** Where file bytes live when the store serves files and documents (contract.md §3). */
export interface FilesOptions {
  blobs: BlobStore;
  /** The server-wide cap on POST /files (default 1 GB, sql/file-rules.ts). */
  maxUploadBytes?: number;
  /** Where the garbage pass on open reports a failure. */
  notice?: (line: string) => void;
}

export interface StoreOptions {
  path: string;
  files?: FilesOptions;
  /** Set up the database (Backend.setup, the search index) before the first call. */
  open: (core: Core) => Promise<void>;
}

/** Shared by the process's store and every transaction-bound store made from it. */
interface Shared {
  backend: Backend;
  /** The process's catalog: transactions work on a view of it (catalog.ts). */
  core: Core;
  idempotency: Idempotency;
  ready: Promise<void>;
  /** The keys version, reused for Backend.keysVersionMaxAgeMs (undefined: read every time). */
  keysVersion?: RecentRead<number>;
}

/** Where a store's calls run: each in its own transaction / snapshot, or inside one given. */
type Binding = { kind: 'top' } | { kind: 'tx'; tx: Executor; core: Core; whole?: WholeBody; marks: TransactionMarks };

/**
 * The backend-neutral Store (engine/store/types.ts) over a Backend (engine/store/port.ts).
 * Every write method is one `driver.transaction(async tx => …)`; every read one
 * `driver.snapshot`, which starts by checking the catalog token (catalog.ts) when it reads the
 * object schema (`read`; `readPlain` otherwise). Inside
 * `transaction(fn)`, `fn` gets a store bound to that transaction: its calls run at once on
 * its `tx`. The modules it calls own their tables (schema-*.ts, records.ts, keys.ts, …).
 *
 * Members are own properties (not prototype methods), so a wrapper may spread the store.
 */
export class SqlStore implements Store {
  readonly path: string;
  readonly files?: FilesApi;
  readonly rateCounter?: RateCounter;

  private constructor(private readonly shared: Shared, private readonly scope: Binding, path: string) {
    this.path = path;
    if (scope.kind === 'top' && shared.core.files) this.files = shared.core.files;
    if (scope.kind === 'top' && shared.backend.rateCounter) this.rateCounter = shared.backend.rateCounter;
  }

  static open(backend: Backend, options: StoreOptions): SqlStore {
    // The files service runs its transactions and reads through the store (below), so they
    // get the store's catalog refresh and byte flush like every other write.
    let store: SqlStore | undefined;
    const through = (): SqlStore => {
      if (!store) throw new Error('the store is not open yet');
      return store;
    };
    const files =
      options.files &&
      new FilesService({
        blobs: options.files.blobs,
        codec: backend.codecs.document,
        driver: backend.driver,
        transaction: (fn) => through().write((core, tx) => fn(tx, core.catalog)),
        snapshot: (fn) => through().read((core, ex) => fn(ex, core.catalog)),
        ...(options.files.maxUploadBytes === undefined ? {} : { maxUploadBytes: options.files.maxUploadBytes }),
      });
    const core: Core = {
      backend,
      dialect: backend.dialect,
      codecs: backend.codecs,
      ddl: backend.ddl,
      fulltext: backend.fulltext,
      catalog: new Catalog(backend),
      sources: new SourceCache(),
      ...(files ? { files } : {}),
    };
    const ready = options.open(core);
    // Reported by the first call that awaits it, never as an unhandled rejection.
    ready.catch(() => undefined);
    const shared: Shared = { backend, core, idempotency: new Idempotency(), ready };
    const maxAge = backend.keysVersionMaxAgeMs ?? 0;
    if (maxAge > 0) shared.keysVersion = new RecentRead(maxAge, () => through().readPlain((ex) => Keys.version(ex)));
    store = new SqlStore(shared, { kind: 'top' }, options.path);
    void files?.collectAtOpen(ready, options.files?.notice ?? ((line) => process.stderr.write(`${line}\n`)));
    return store;
  }

  /** Waits for the setup on open; its failure (a newer database) is this call's. */
  ready = (): Promise<void> => this.shared.ready;

  private read<T>(fn: (core: Core, ex: Executor) => Promise<T>): Promise<T> {
    if (this.scope.kind === 'tx') return fn(this.scope.core, this.scope.tx);
    const core = this.shared.core;
    return this.readPlain((ex) => core.catalog.refresh(ex).then(() => fn(core, ex)));
  }

  /** A read that needs no object schema (keys, idempotency, roles, views, history): no catalog refresh, a statement of its own on SQLite (auth reads the keys version on every request). */
  private async readPlain<T>(fn: (ex: Executor) => Promise<T>): Promise<T> {
    if (this.scope.kind === 'tx') return fn(this.scope.tx);
    await this.shared.ready;
    return this.shared.backend.driver.snapshot(fn);
  }

  /**
   * One write transaction (or a savepoint inside the bound one). `grouped` lets the driver run
   * it in one transaction with other grouped writes waiting at the same time (group commit,
   * engine/store/port.ts TransactionOptions); only single-record writes ask (see RECORD_WRITE).
   */
  private async write<T>(fn: (core: Core, tx: Executor) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    if (this.scope.kind === 'tx') {
      const { core, tx, whole } = this.scope;
      return whole ? inWholeBody(whole, () => fn(core, tx)) : savepoint(tx, () => fn(core, tx));
    }
    await this.shared.ready;
    const shared = this.shared.core;
    let view: Catalog | undefined;
    const ticket = shared.files?.begin();
    try {
      const out = await this.shared.backend.driver.transaction(async (tx) => {
        await shared.catalog.refresh(tx);
        // A fresh view per attempt: a retried transaction starts from the committed schema.
        view = shared.catalog.begin(tx);
        const out = await fn({ ...shared, catalog: view }, tx);
        // Before COMMIT: a schema change drops the process's cache, so no call queued behind the COMMIT reads the old schema.
        view.retire();
        return out;
      }, options);
      // Committed: the view is the schema now, unless another call has loaded it since.
      view?.publish();
      return out;
    } finally {
      // Bytes whose last file row this write deleted go now that it has ended (file-bytes.ts).
      if (ticket !== undefined) await shared.files?.ended(ticket);
    }
  }

  /** The same store, its calls bound to `tx` (`transaction`'s `tx`). */
  private bound(core: Core, tx: Executor, marks: TransactionMarks, whole?: WholeBody): SqlStore {
    return new SqlStore(this.shared, { kind: 'tx', tx, core, marks, ...(whole ? { whole } : {}) }, this.path);
  }

  close = async (): Promise<void> => {
    await this.shared.ready.catch(() => undefined);
    await this.shared.backend.driver.close();
  };

  transaction = async <T>(fn: (tx: Store) => Promise<T>, options: StoreTransactionOptions = {}): Promise<T> => {
    // Inside another transaction the marks are that one's; at the top, this one's end reads them.
    const marks: TransactionMarks = this.scope.kind === 'tx' ? this.scope.marks : { keys: false };
    const body = (core: Core, tx: Executor) => {
      if (options.savepoints !== false) return fn(this.bound(core, tx, marks));
      const whole: WholeBody = {};
      return fn(this.bound(core, tx, marks, whole)).then((out) => endWholeBody(whole, out));
    };
    if (this.scope.kind === 'tx') return this.write(body);
    try {
      return await this.write(body);
    } catch (err) {
      if (err instanceof UniqueToName) return this.nameUnique(err.prepared, err.cause);
      throw err;
    } finally {
      if (marks.keys) this.shared.keysVersion?.forget();
    }
  };

  /**
   * A write that may change what a key is (a revoke, a role renamed by a push): this process
   * reads the keys version again once it has settled — inside a `transaction`, once that one
   * has (a read before its COMMIT would keep the old version). A transaction whose writes
   * change no key (an idempotent record write) leaves the reused version alone.
   */
  private keysMayChange = <T>(write: Promise<T>): Promise<T> => {
    if (this.scope.kind === 'tx') {
      this.scope.marks.keys = true;
      return write;
    }
    return this.shared.keysVersion?.forgetAfter(write) ?? write;
  };

  // ------------------------------------------------------------------ schema
  /** How a schema write runs (write-policy.ts). */
  private readonly schema = (): TransactionOptions => schemaWrite(this.shared.core.catalog);

  listObjects = () => this.read((core, ex) => core.catalog.list(ex));
  findObject = (idOrName: string) => this.read((core, ex) => core.catalog.find(ex, idOrName));
  requireObject = (idOrName: string) => this.read((core, ex) => core.catalog.require(ex, idOrName));

  createObject = async (input: CreateObjectInput, owner: Owner) => {
    const specs = checkCreateObject(input);
    return this.write(async (core, tx) => {
      await insertObject(core, tx, input.name, { label: input.label, description: input.description }, specs, owner);
      return core.catalog.require(tx, input.name);
    });
  };
  deleteObject = (idOrName: string, options: { force?: boolean } = {}) => this.write((core, tx) => deleteObject(core, tx, idOrName, options), this.schema());
  addAttribute = (object: string, spec: AttributeSpec, owner: Owner) => this.write((core, tx) => addAttribute(core, tx, object, spec, owner), this.schema());
  updateAttribute = (object: string, attribute: string, patch: AttributePatch) => this.write((core, tx) => updateAttribute(core, tx, object, attribute, patch), this.schema());
  deleteAttribute = (object: string, attribute: string) => this.write((core, tx) => deleteAttribute(core, tx, object, attribute), this.schema());

  // ------------------------------------------------------------------ records

  // One statement instead of a transaction where the backend offers it (lone-create.ts); inside `transaction`, that one's write.
  createRecord = async (object: string, values: Record<string, unknown>, actor: Actor) =>
    (this.scope.kind === 'top' ? await loneCreate(this.shared.core, object, values, actor) : undefined) ?? (await this.creates(object, [values], actor, false))[0]!;

  bulkCreate = (object: string, list: Record<string, unknown>[], actor: Actor) => this.creates(object, list, actor, true);

  /** A unique index refused the insert: the batch rolled back, and the rule names every offender on the untouched table (records.ts). */
  private async creates(object: string, bodies: unknown[], actor: Actor, bulk: boolean) {
    let prepared: records.PreparedCreates | undefined;
    try {
      return await this.write(async (core, tx) => {
        const o = await core.catalog.require(tx, object);
        if (bulk) records.checkBatch(bodies, 'records', MAX_BULK_WRITE);
        const p = records.prepareCreates(core, o, bodies, bulk);
        prepared = p.prepared;
        return records.writeCreates(core, tx, p.prepared, p.errors, actor);
      }, bulk ? {} : RECORD_WRITE);
    } catch (err) {
      if (!prepared || this.shared.backend.driver.classify(err) !== 'unique') throw err;
      // In a body without savepoints the refused statement ended what its transaction can do
      // (PostgreSQL aborts it): `transaction` names the offenders once it has rolled back.
      if (this.scope.kind === 'tx' && this.scope.whole) throw new UniqueToName(prepared, err);
      return this.nameUnique(prepared, err);
    }
  }

  private nameUnique = async (p: records.PreparedCreates, err: unknown): Promise<never> => Promise.reject((await this.read((_core, ex) => records.nameUniqueOffenders(ex, p))) ?? err);

  getRecord = (object: string, id: string) => this.read(async (core, ex) => records.getRecord(core, ex, await core.catalog.require(ex, object), id));

  updateRecord = (object: string, id: string, patch: Record<string, unknown>, ifMatch: number | '*', actor: Actor) =>
    this.updates(object, [{ id, ifMatch, values: patch }], false, actor).then((out) => out[0]!);

  bulkUpdate = (object: string, items: BulkUpdateItem[], actor: Actor) => this.updates(object, items, true, actor);

  private updates(object: string, items: BulkUpdateItem[] | records.UpdateItem[], bulk: boolean, actor: Actor) {
    return this.write(async (core, tx) => {
      const o = await core.catalog.require(tx, object);
      const list = bulk ? records.checkBulkUpdate(items as BulkUpdateItem[]) : (items as records.UpdateItem[]);
      const rows = records.prepareUpdates(core, o, list, bulk);
      return records.writeUpdates(core, tx, o, rows, bulk, actor);
    }, bulk ? {} : RECORD_WRITE);
  }

  deleteRecord = (object: string, id: string) =>
    this.write(async (core, tx) => {
      await records.deleteRecord(core, tx, await core.catalog.require(tx, object), id);
      return { id };
    }, RECORD_WRITE);

  bulkDelete = (object: string, ids: string[]) =>
    this.write(async (core, tx) => {
      const o = await core.catalog.require(tx, object);
      records.checkBulkDelete(ids);
      return records.bulkDelete(core, tx, o, ids);
    });

  search = (object: string, input: SearchInput) => this.read(async (core, ex) => searchRecords(core, ex, await core.catalog.require(ex, object), input));

  /** A read: the index is current with every committed write (engine/store/port.ts FulltextPort; on SQLite the search first commits the entries single writes left waiting). */
  globalSearch = (input: GlobalSearchInput) => this.read((core, ex) => core.fulltext.query(ex, input));

  // ------------------------------------------------------------------ idempotency, keys

  // In a transaction (as the server calls it) the key is claimed first (sql/idempotency.ts); outside one, only read.
  recallIdempotent = (scope: string, key: string, bodyHash: string) => this.readPlain((ex) => this.shared.idempotency.recall(ex, scope, key, bodyHash, this.scope.kind === 'tx'));
  rememberIdempotent = (scope: string, key: string, bodyHash: string, answer: IdempotentAnswer) =>
    this.write((_core, tx) => this.shared.idempotency.remember(tx, scope, key, bodyHash, answer));

  createKey = (input: { name: string; role: string; scopes?: Scope[] | null }, authorize?: KeyGuard) =>
    this.write(async (_core, tx) => Keys.create(tx, input, !isBuiltinRole(input.role) && (await roles.findRole(tx, input.role)) !== undefined, authorize));
  listKeys = () => this.readPlain((ex) => Keys.list(ex));
  revokeKey = (id: string, authorize?: KeyGuard) => this.keysMayChange(this.write((_core, tx) => Keys.revoke(tx, id, authorize)));
  authenticate = async (secret: string) => {
    const found = await this.readPlain((ex) => Keys.authenticate(ex, secret));
    if (!found) return null;
    // lastUsedAt, at most once a minute per key: the only write authenticating does.
    if (found.touch) await this.write((_core, tx) => Keys.touch(tx, found.actor.keyId));
    return found.actor;
  };
  countActiveKeys = () => this.readPlain((ex) => Keys.countActive(ex));
  keysVersion = () => (this.scope.kind === 'top' && this.shared.keysVersion ? this.shared.keysVersion.get() : this.readPlain((ex) => Keys.version(ex)));

  // ------------------------------------------------------------------ custom roles

  listRoles = () => this.readPlain((ex) => roles.listRoles(ex));
  findRole = (name: string) => this.readPlain((ex) => roles.findRole(ex, name));

  /** POST /roles: a runtime role over stored objects. */
  createRole = async (name: string, decl: RoleDecl) => {
    roles.refuseBuiltin(name);
    roles.checkRoleName(name);
    return this.write(async (core, tx) => {
      if (await roles.findRole(tx, name)) throw new ServiceError('SCHEMA_CONFLICT', `A role named "${name}" already exists; change it with PUT /roles/${name}`);
      roles.checkPermissionObjects(decl, [...(await core.catalog.objects(tx)).keys()]);
      await roles.upsertRole(tx, name, decl, { kind: 'runtime' });
      return (await roles.findRole(tx, name))!;
    });
  };

  /** PUT /roles/:id: replaces a runtime role's definition. */
  putRole = async (name: string, decl: RoleDecl) => {
    roles.refuseBuiltin(name);
    return this.write(async (core, tx) => {
      const role = await roles.findRole(tx, name);
      if (!role) throw roles.roleNotFound(name);
      roles.refuseSourceOwned(role);
      roles.checkPermissionObjects(decl, [...(await core.catalog.objects(tx)).keys()]);
      await roles.upsertRole(tx, name, decl, role.owner);
      return (await roles.findRole(tx, name))!;
    });
  };

  deleteRole = async (name: string) => {
    roles.refuseBuiltin(name);
    await this.write(async (_core, tx) => {
      const role = await roles.findRole(tx, name);
      if (!role) throw roles.roleNotFound(name);
      roles.refuseSourceOwned(role);
      await roles.refuseIfKeysHold(tx, name);
      await roles.dropRole(tx, name);
    });
  };

  // ------------------------------------------------------------------ views, sources, sync

  listViews = () => this.readPlain((ex) => loadViews(ex));
  findView = (name: string) => this.readPlain((ex) => findView(ex, name));
  putView = (name: string, decl: ViewDecl) => this.write(async (core, tx) => putRuntimeView(tx, name, checkRuntimeView(name, decl, await core.catalog.list(tx))));
  deleteView = (name: string) => this.write((_core, tx) => deleteRuntimeView(tx, name));

  /** A view's page: its filter and sort with the caller's limit and cursor, values cut to its columns. */
  runView = (name: string, page: { limit?: number; cursor?: string }) =>
    this.read(async (core, ex) => {
      const view = await findView(ex, name);
      if (!view) throw viewNotFound(name);
      const result = await searchRecords(core, ex, await core.catalog.require(ex, view.object), {
        ...(view.filter ? { filter: view.filter } : {}),
        ...(view.sort ? { sort: view.sort } : {}),
        ...page,
      });
      const columns = view.columns;
      if (columns) {
        for (const r of result.records) r.values = Object.fromEntries(columns.filter((c) => Object.hasOwn(r.values, c)).map((c) => [c, r.values[c]]));
      }
      return { ...result, view };
    });

  findSource = (id: string) => this.read((core, ex) => core.sources.find(ex, id));
  sourceHistory = (id: string, options: { limit?: number; cursor?: string } = {}) => this.readPlain((ex) => listHistory(ex, id, options));
  pushSource = (id: string, declaration: Declaration, options: PushOptions) =>
    this.keysMayChange(pushSource({ read: (fn) => this.read(fn), write: (fn) => this.write(fn, this.schema()) }, id, declaration, options));

  // ------------------------------------------------------------------ for tests of the core (not part of Store)

  /** The data probe's answers, each read now (probe.ts factsOver); `probe`: `run` (a pure planner call) with them, in one snapshot. */
  facts = () => factsOver((fn) => this.read(fn));
  probe = <T>(run: (facts: DataFacts) => T): Promise<T> => this.read((core, ex) => probeFor(core, ex, run));

  /** One plan applied in one transaction, as a push applies it (tests of the applier; not part of Store). */
  applyPlan = (plan: Plan, sourceId: string, declaration: Declaration) => this.keysMayChange(this.write((core, tx) => applyPlan(core, tx, plan, sourceId, declaration), this.schema()));
}
