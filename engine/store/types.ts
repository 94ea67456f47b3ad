import type { SearchHit } from '../model/search-hit.js';
import type { AttributePatch, AttributeSpec } from '../model/attribute.js';
import type { Declaration, ViewDecl } from '../model/declaration.js';
import type { Filter, SortSpec } from '../model/filter.js';
import type { Owner, RecordOut, SourceHistoryEntry, StoredAttribute, StoredObject, StoredRole, StoredSource, StoredView } from '../model/stored.js';
import type { RoleDecl, RoleGrants } from '../model/roles.js';
import type { PushAnswer, PushChoices } from '../plan/push.js';
import type { Plan } from '../plan/types.js';
import type { Readable } from 'node:stream';
import type { DocumentOut, FileOut } from '../model/stored.js';

export { BUILTIN_ROLES, type BuiltinRole } from '../model/roles.js';

export { SCOPES, type KeyOut, type Scope } from '../model/keys.js';
import type { KeyOut, Scope } from '../model/keys.js';

/** Refuses (throws) a key the caller may not create or revoke; sees its role and scopes. */
export type KeyGuard = (key: { role: string; scopes: Scope[] | null }) => void;

/** The authenticated caller a route acts for. */
export interface Actor {
  keyId: string;
  role: string;
  /** null: the key has no scope restriction (its role alone decides). */
  scopes: Scope[] | null;
  /** A custom role's grants, read fresh for each request (engine/server/app.ts); absent for built-in roles. */
  grants?: RoleGrants;
}

export interface CreateObjectInput {
  name: string;
  label?: string;
  description?: string;
  attributes?: AttributeSpec[];
}

export interface SearchInput {
  filter?: Filter;
  sort?: SortSpec[];
  /** 1..500, default 50 */
  limit?: number;
  cursor?: string;
}

export interface SearchPage {
  records: RecordOut[];
  nextCursor: string | null;
  total?: number;
}

/** POST /search, GET /global-search (contract.md §3 "Cross-object search"). */
export interface GlobalSearchInput {
  query: string;
  /** The objects to search, already cut to those the caller may read (null: all). */
  objects: readonly string[] | null;
  /** 1..100 (the route checks it). */
  limit: number;
}


export interface BulkUpdateItem {
  id: string;
  version?: number;
  values: Record<string, unknown>;
}

/**
 * `savepoints: false`: the body lets every failure of a write on `tx` end it (it returns or
 * throws, and never goes on after catching one), so its writes need no savepoint each: the
 * transaction's rollback undoes a failed one. Why offer it: in SQLite a savepoint keeps the
 * old content of every page the write changes that existed before it (the sub-journal), and a
 * bulk write's index pages overflow the in-memory part into a temporary file — ~45% more
 * store CPU for an idempotent 1,000-record bulk-create. A body that catches a failure anyway
 * cannot commit half a write: the transaction is rolled back with an internal error (its
 * `cause` the write's failure).
 */
export interface StoreTransactionOptions {
  savepoints?: boolean;
}

/** A stored answer for an idempotency-key replay (contract.md §3). */
export interface IdempotentAnswer {
  status: number;
  /** The answer's JSON text as it was sent: a replay sends it again as is (serialised once). */
  body: string;
}

/** A push's options as the wire gives them (engine/plan/push.ts), and what only the server adds. */
export interface PushOptions extends PushChoices {
  /** The key that pushes, recorded in the source's history. */
  by?: PushAuthor;
  /**
   * The caller hands the declaration over and never changes it (the route's parsed body):
   * the store keeps that object as the source's last declaration rather than parsing the
   * text it wrote on the next push (~10 ms for 1.5 MB, issue 4).
   */
  handOver?: boolean;
  /**
   * Called with the plan of a real push before anything is applied, inside its transaction:
   * a ServiceError it throws refuses the push as it is (nothing written). The server checks
   * there what only the plan shows: role steps need the right that /roles needs.
   */
  authorize?: (plan: Plan) => void;
}

/** What a push answers: the wire's answer (engine/plan/push.ts). */
export type PushResult = PushAnswer;

/**
 * The store's public surface, the same on every backend: what routes, the sync engine and
 * tests call. Routes never hold SQL (architecture.md); every rule the spec gives a code for
 * is enforced behind it by throwing ServiceError. Every write method is one transaction;
 * `transaction` runs several as one.
 */
export interface Store {
  readonly path: string;
  close(): Promise<void>;

  // --- schema (objectId / attribute id accept the id or the name, contract.md §3)
  listObjects(): Promise<StoredObject[]>;
  /** undefined when unknown; `requireObject` throws SCHEMA_OBJECT_NOT_FOUND. */
  findObject(idOrName: string): Promise<StoredObject | undefined>;
  requireObject(idOrName: string): Promise<StoredObject>;
  createObject(input: CreateObjectInput, owner: Owner): Promise<StoredObject>;
  /** Refuses protected (403), referenced (409), non-empty unless force (409 SCHEMA_CONFLICT). */
  deleteObject(idOrName: string, options?: { force?: boolean }): Promise<void>;
  addAttribute(object: string, spec: AttributeSpec, owner: Owner): Promise<StoredAttribute>;
  /**
   * Refuses changes that stored data breaks (SCHEMA_VALIDATION_FAILED naming the rule, count,
   * sample ids). `null` in the patch removes that field (AttributePatch).
   */
  updateAttribute(object: string, attribute: string, patch: AttributePatch): Promise<StoredAttribute>;
  deleteAttribute(object: string, attribute: string): Promise<void>;

  // --- records (`object` is the object's name)
  createRecord(object: string, values: Record<string, unknown>, actor: Actor): Promise<RecordOut>;
  getRecord(object: string, id: string): Promise<RecordOut>;
  /** ifMatch: a version number or '*'. Stale → 409 SCHEMA_CONFLICT. */
  updateRecord(object: string, id: string, patch: Record<string, unknown>, ifMatch: number | '*', actor: Actor): Promise<RecordOut>;
  deleteRecord(object: string, id: string): Promise<{ id: string }>;
  bulkCreate(object: string, records: Record<string, unknown>[], actor: Actor): Promise<RecordOut[]>;
  bulkUpdate(object: string, items: BulkUpdateItem[], actor: Actor): Promise<RecordOut[]>;
  bulkDelete(object: string, ids: string[]): Promise<{ deleted: number }>;
  search(object: string, input: SearchInput): Promise<SearchPage>;
  /** Full-text search across objects; a read, never a write (the index is kept by the writes). */
  globalSearch(input: GlobalSearchInput): Promise<SearchHit[]>;

  /**
   * Idempotency (contract.md §3): the answer stored under (actor, key) if `bodyHash`
   * matches; 409 SCHEMA_CONFLICT if it does not; undefined when the key is new.
   * `remember` stores an answer for 24 h.
   */
  recallIdempotent(scope: string, key: string, bodyHash: string): Promise<IdempotentAnswer | undefined>;
  rememberIdempotent(scope: string, key: string, bodyHash: string, answer: IdempotentAnswer): Promise<void>;
  /**
   * Runs `fn` as one write transaction: every call on `tx` lands or none does, and no other
   * write interleaves (engine/store/port.ts Driver.transaction says how a backend keeps
   * that). Call only `tx` inside `fn`: the outer store waits for the transaction to end.
   * Each write on `tx` is all or nothing on its own too (a savepoint), so `fn` may catch a
   * failed write and go on; `{ savepoints: false }` is for a body that never does (see
   * StoreTransactionOptions).
   */
  transaction<T>(fn: (tx: Store) => Promise<T>, options?: StoreTransactionOptions): Promise<T>;

  // --- keys
  /** The secret is returned once and stored only as a hash. */
  /**
   * `authorize` runs in the write transaction once the role is known to exist (an unknown
   * role is 404 before any 403) and may refuse by throwing: the caller's rights are weighed
   * against what is written, with nothing changing in between.
   */
  createKey(input: { name: string; role: string; scopes?: Scope[] | null }, authorize?: KeyGuard): Promise<{ key: KeyOut; secret: string }>;
  listKeys(): Promise<KeyOut[]>;
  /** Revoking the last active owner key → 400 SCHEMA_VALIDATION_FAILED. */
  /** `authorize` sees the stored key in the revoking transaction (not called for an unknown id: 404). */
  revokeKey(id: string, authorize?: KeyGuard): Promise<void>;
  /** Constant-time comparison of the hash; null for unknown or revoked. */
  authenticate(secret: string): Promise<Actor | null>;
  countActiveKeys(): Promise<number>;
  /** Moves whenever a key is revoked, by any process sharing the database (auth caches compare it). */
  keysVersion(): Promise<number>;

  // --- custom roles (built-in ones are described by engine/server/permissions.ts)
  listRoles(): Promise<StoredRole[]>;
  findRole(name: string): Promise<StoredRole | undefined>;
  createRole(name: string, decl: RoleDecl): Promise<StoredRole>;
  putRole(name: string, decl: RoleDecl): Promise<StoredRole>;
  /** Refused while active keys hold the role (409 SCHEMA_CONFLICT naming them). */
  deleteRole(name: string): Promise<void>;

  // --- views and sources
  listViews(): Promise<StoredView[]>;
  findView(name: string): Promise<StoredView | undefined>;
  /** A runtime view (contract §3): checked like a declared view; a source's view → 409 SCHEMA_DUPLICATE. */
  putView(name: string, decl: ViewDecl): Promise<StoredView>;
  deleteView(name: string): Promise<void>;
  /** GET /views/:name/records: the view's filter and sort, keyset pages, values cut to its columns. */
  runView(name: string, page: { limit?: number; cursor?: string }): Promise<SearchPage & { view: StoredView }>;
  findSource(id: string): Promise<StoredSource | undefined>;
  /** GET /schema/sources/:id/history: the pushes that changed the source, newest first. */
  sourceHistory(id: string, options?: { limit?: number; cursor?: string }): Promise<HistoryPage>;

  /**
   * Files and documents (contract.md §3, engine/store/files.ts): present when the store was
   * opened with a folder for the bytes (`<data>/files`). The file routes answer 503 without it.
   */
  readonly files?: FilesApi;

  /**
   * The rate-limit counts shared by every process on this database (PostgreSQL); absent
   * when one process owns the database (SQLite), whose server counts in memory.
   */
  readonly rateCounter?: RateCounter;

  /**
   * PUT /schema/sources/:id: plan with the pure planner, refuse by the contract's
   * order, otherwise apply every step in one transaction and bump the source version.
   */
  pushSource(id: string, declaration: Declaration, options: PushOptions): Promise<PushResult>;
}

/**
 * Request counts for the rate limits (contract.md §3 "Rate limits"), kept where every
 * process serving the same database sees them (contract.md §8). `take` counts one request
 * of (bucket, ip) in the window starting at `windowStart` (ms) and answers the window's
 * count including it.
 */
export interface RateCounter {
  take(bucket: string, ip: string, windowStart: number): number | Promise<number>;
}

/** The file and document routes' operations (contract.md §3 "Files"). */
export interface FilesApi {
  uploadFile(input: UploadInput, actor: Actor): Promise<FileOut>;
  getFile(id: string): Promise<FileOut>;
  openFile(id: string): Promise<{ file: FileOut; stream: Readable }>;
  renameFile(id: string, name: string, actor: Actor): Promise<FileOut>;
  deleteFile(id: string, actor: Actor): Promise<{ id: string }>;
  getDocument(id: string): Promise<DocumentOut>;
  /** `authorize` sees the document before its title changes (in the same transaction) and may refuse by throwing. */
  renameDocument(id: string, title: string, authorize?: (doc: DocumentOut) => void): Promise<DocumentOut>;
  deleteDocument(id: string, actor: Actor): Promise<{ id: string }>;
  uploadDocument(
    target: { object: string; recordId: string; attribute: string },
    input: UploadInput & { title?: string | undefined },
    actor: Actor,
  ): Promise<DocumentOut>;
}

/** Who pushed, as the source history keeps it. */
export interface PushAuthor {
  id: string;
  name: string;
}

export interface HistoryPage {
  entries: SourceHistoryEntry[];
  nextCursor: string | null;
}

/** An upload as the files service takes it. */
export interface UploadInput {
  /** The name the client gave; kept as metadata only (never a path). */
  name: string | undefined;
  mimeType: string | undefined;
  stream: Readable;
  /**
   * Awaited once the bytes are on disk and before anything is committed. The HTTP route
   * reads the rest of the multipart body here: a refusal found after the file part (a
   * second file) must leave no row and no bytes (contract.md §3, issue 5), and a `title`
   * sent after the file part is known before the document row is written.
   */
  untilBodyEnds?: () => Promise<{ title?: string | undefined }>;
}
