import type { AttributePatch, AttributeSpec } from '../model/attribute.js';
import type { Declaration, ViewDecl } from '../model/declaration.js';
import type { RoleDecl } from '../model/roles.js';
import type { Owner } from '../model/stored.js';
import type { FilesEngine, UploadInput } from './sqlite/files.js';
import type { SqliteStore } from './sqlite/core.js';
import type { SqliteDriver } from './sqlite/driver.js';
import type { Actor, BulkUpdateItem, CreateObjectInput, FilesApi, IdempotentAnswer, PushOptions, Scope, SearchInput, Store, GlobalSearchInput } from './types.js';

/** How a call reaches the core: through the connection's queue, or at once inside a transaction. */
type Runner = <T>(fn: () => T) => Promise<T>;

const atOnce: Runner = (fn) => {
  try {
    return Promise.resolve(fn());
  } catch (err) {
    return Promise.reject(err);
  }
};

/**
 * The async Store over the embedded backend's core. Every call runs in the driver's queue
 * (engine/store/sqlite/driver.ts), so a `transaction` body that awaits never shares the
 * connection with another request; inside it, the `tx` store runs calls at once. The core's
 * own write methods are each one transaction (a savepoint inside `transaction`).
 */
export class QueuedStore implements Store {
  readonly files?: FilesApi;
  /** Own properties (not prototype getters or methods), so a wrapper may spread the store. */
  readonly path: string;

  constructor(
    private readonly core: SqliteStore,
    private readonly driver: SqliteDriver,
    private readonly run: Runner,
  ) {
    this.path = core.path;
    const engine = core.files;
    if (engine) this.files = queuedFiles(engine, run);
  }

  static open(core: SqliteStore, driver: SqliteDriver): QueuedStore {
    return new QueuedStore(core, driver, (fn) => driver.serial(fn));
  }

  close = async (): Promise<void> => {
    await this.driver.serial(() => this.core.close());
  };

  transaction = async <T>(fn: (tx: Store) => Promise<T>): Promise<T> => {
    const tx = new QueuedStore(this.core, this.driver, atOnce);
    try {
      return await this.driver.transaction(async () => {
        try {
          return await fn(tx);
        } catch (err) {
          // The rollback undoes whatever schema the body wrote: the object cache goes with it,
          // before the connection is free for the next call.
          this.core.schemaChanged();
          throw err;
        }
      });
    } catch (err) {
      // A COMMIT that failed rolled back too.
      this.core.schemaChanged();
      throw err;
    } finally {
      this.core.files?.flushReleases();
    }
  };

  listObjects = () => this.run(() => this.core.listObjects());
  findObject = (idOrName: string) => this.run(() => this.core.findObject(idOrName));
  requireObject = (idOrName: string) => this.run(() => this.core.requireObject(idOrName));
  createObject = (input: CreateObjectInput, owner: Owner) => this.run(() => this.core.createObject(input, owner));
  deleteObject = (idOrName: string, options?: { force?: boolean }) => this.run(() => this.core.deleteObject(idOrName, options));
  addAttribute = (object: string, spec: AttributeSpec, owner: Owner) => this.run(() => this.core.addAttribute(object, spec, owner));
  updateAttribute = (object: string, attribute: string, patch: AttributePatch) => this.run(() => this.core.updateAttribute(object, attribute, patch));
  deleteAttribute = (object: string, attribute: string) => this.run(() => this.core.deleteAttribute(object, attribute));

  createRecord = (object: string, values: Record<string, unknown>, actor: Actor) => this.run(() => this.core.createRecord(object, values, actor));
  getRecord = (object: string, id: string) => this.run(() => this.core.getRecord(object, id));
  updateRecord = (object: string, id: string, patch: Record<string, unknown>, ifMatch: number | '*', actor: Actor) =>
    this.run(() => this.core.updateRecord(object, id, patch, ifMatch, actor));
  deleteRecord = (object: string, id: string) => this.run(() => this.core.deleteRecord(object, id));
  bulkCreate = (object: string, records: Record<string, unknown>[], actor: Actor) => this.run(() => this.core.bulkCreate(object, records, actor));
  bulkUpdate = (object: string, items: BulkUpdateItem[], actor: Actor) => this.run(() => this.core.bulkUpdate(object, items, actor));
  bulkDelete = (object: string, ids: string[]) => this.run(() => this.core.bulkDelete(object, ids));
  search = (object: string, input: SearchInput) => this.run(() => this.core.search(object, input));
  globalSearch = (input: GlobalSearchInput) => this.run(() => this.core.globalSearch(input));

  recallIdempotent = (scope: string, key: string, bodyHash: string) => this.run(() => this.core.recallIdempotent(scope, key, bodyHash));
  rememberIdempotent = (scope: string, key: string, bodyHash: string, answer: IdempotentAnswer) =>
    this.run(() => this.core.rememberIdempotent(scope, key, bodyHash, answer));

  createKey = (input: { name: string; role: string; scopes?: Scope[] | null }) => this.run(() => this.core.createKey(input));
  listKeys = () => this.run(() => this.core.listKeys());
  revokeKey = (id: string) => this.run(() => this.core.revokeKey(id));
  authenticate = (secret: string) => this.run(() => this.core.authenticate(secret));
  countActiveKeys = () => this.run(() => this.core.countActiveKeys());
  keysVersion = () => this.run(() => this.core.keysVersion());

  listRoles = () => this.run(() => this.core.listRoles());
  findRole = (name: string) => this.run(() => this.core.findRole(name));
  createRole = (name: string, decl: RoleDecl) => this.run(() => this.core.createRole(name, decl));
  putRole = (name: string, decl: RoleDecl) => this.run(() => this.core.putRole(name, decl));
  deleteRole = (name: string) => this.run(() => this.core.deleteRole(name));

  listViews = () => this.run(() => this.core.listViews());
  findView = (name: string) => this.run(() => this.core.findView(name));
  putView = (name: string, decl: ViewDecl) => this.run(() => this.core.putView(name, decl));
  deleteView = (name: string) => this.run(() => this.core.deleteView(name));
  runView = (name: string, page: { limit?: number; cursor?: string }) => this.run(() => this.core.runView(name, page));
  sourceHistory = (id: string, options?: { limit?: number; cursor?: string }) => this.run(() => this.core.sourceHistory(id, options));
  findSource = (id: string) => this.run(() => this.core.findSource(id));
  pushSource = (id: string, declaration: Declaration, options: PushOptions) => this.run(() => this.core.pushSource(id, declaration, options));
}

/**
 * The file routes' operations in the queue. An upload streams its bytes to disk outside
 * it (a 1 GB upload must not hold every other request); FilesEngine runs only its database
 * part through `run` (the `serial` it was built with).
 */
function queuedFiles(engine: FilesEngine, run: Runner): FilesApi {
  return {
    uploadFile: (input: UploadInput, actor: Actor) => engine.uploadFile(input, actor),
    uploadDocument: (target, input, actor) => engine.uploadDocument(target, input, actor),
    getFile: (id) => run(() => engine.getFile(id)),
    openFile: (id) => run(() => engine.openFile(id)),
    renameFile: (id, name, actor) => run(() => engine.renameFile(id, name, actor)),
    deleteFile: (id, actor) => run(() => engine.deleteFile(id, actor)),
    getDocument: (id) => run(() => engine.getDocument(id)),
    renameDocument: (id, title) => run(() => engine.renameDocument(id, title)),
    deleteDocument: (id, actor) => run(() => engine.deleteDocument(id, actor)),
  };
}
