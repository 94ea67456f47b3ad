import type { AttributePatch, AttributeSpec } from '../model/attribute.js';
import type { Declaration, ViewDecl } from '../model/declaration.js';
import type { Filter, SortSpec } from '../model/filter.js';
import type { Owner, RecordOut, StoredAttribute, StoredObject, StoredSource, StoredView } from '../model/stored.js';
import type { DataFacts } from '../plan/facts.js';
import type { AllowDestructive, Plan } from '../plan/types.js';
import type { FilesApi } from './files.js';

/**
 * The store's public surface: what routes, the sync engine and tests call. Routes never
 * hold SQL (architecture.md); every rule the spec gives a code for is enforced here (or
 * in the model modules it calls) by throwing ServiceError, so routes stay thin and the
 * rule is written once. Every write method is one SQLite transaction.
 */

export const BUILTIN_ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
export type BuiltinRole = (typeof BUILTIN_ROLES)[number];

/** contract.md §3 "Roles, keys, views". */
export const SCOPES = [
  'records:read',
  'records:write',
  'schema:read',
  'schema:write',
  'files:read',
  'files:write',
  'keys:manage',
  'search',
  'mcp',
] as const;
export type Scope = (typeof SCOPES)[number];

/** The authenticated caller a route acts for. */
export interface Actor {
  keyId: string;
  role: string;
  /** null: the key has no scope restriction (its role alone decides). */
  scopes: Scope[] | null;
}

export interface KeyOut {
  id: string;
  name: string;
  role: string;
  scopes: Scope[] | null;
  createdAt: string;
  revokedAt: string | null;
  lastUsedAt: string | null;
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

export interface BulkUpdateItem {
  id: string;
  version?: number;
  values: Record<string, unknown>;
}

/** A stored answer for an idempotency-key replay (contract.md §3). */
export interface IdempotentAnswer {
  status: number;
  body: unknown;
}

export interface PushOptions {
  dryRun?: boolean;
  allowDestructive?: AllowDestructive;
  /** The source version the caller planned against (`if-match`). */
  ifMatch?: number;
  /**
   * The caller hands the declaration over and never changes it (the route's parsed body):
   * the store keeps that object as the source's last declaration rather than parsing the
   * text it wrote on the next push (~10 ms for 1.5 MB, issue 4).
   */
  handOver?: boolean;
}

export interface PushResult {
  version: number;
  applied: boolean;
  plan: Plan;
}

export interface Store {
  readonly path: string;
  close(): void;

  // --- schema (objectId / attribute id accept the id or the name, contract.md §3)
  listObjects(): StoredObject[];
  /** undefined when unknown; `requireObject` throws SCHEMA_OBJECT_NOT_FOUND. */
  findObject(idOrName: string): StoredObject | undefined;
  requireObject(idOrName: string): StoredObject;
  createObject(input: CreateObjectInput, owner: Owner): StoredObject;
  /** Refuses protected (403), referenced (409), non-empty unless force (409 SCHEMA_CONFLICT). */
  deleteObject(idOrName: string, options?: { force?: boolean }): void;
  addAttribute(object: string, spec: AttributeSpec, owner: Owner): StoredAttribute;
  /** Refuses changes that stored data breaks (SCHEMA_VALIDATION_FAILED naming the rule, count, sample ids). */
  /** `null` in the patch removes that field (AttributePatch). */
  updateAttribute(object: string, attribute: string, patch: AttributePatch): StoredAttribute;
  deleteAttribute(object: string, attribute: string): void;

  // --- records (`object` is the object's name)
  createRecord(object: string, values: Record<string, unknown>, actor: Actor): RecordOut;
  getRecord(object: string, id: string): RecordOut;
  /** ifMatch: a version number or '*'. Stale → 409 SCHEMA_CONFLICT. */
  updateRecord(object: string, id: string, patch: Record<string, unknown>, ifMatch: number | '*', actor: Actor): RecordOut;
  deleteRecord(object: string, id: string): { id: string };
  bulkCreate(object: string, records: Record<string, unknown>[], actor: Actor): RecordOut[];
  bulkUpdate(object: string, items: BulkUpdateItem[], actor: Actor): RecordOut[];
  bulkDelete(object: string, ids: string[]): { deleted: number };
  search(object: string, input: SearchInput): SearchPage;

  /**
   * Idempotency (contract.md §3): the answer stored under (actor, key) if `bodyHash`
   * matches; 409 SCHEMA_CONFLICT if it does not; undefined when the key is new.
   * `remember` stores an answer for 24 h.
   */
  recallIdempotent(scope: string, key: string, bodyHash: string): IdempotentAnswer | undefined;
  rememberIdempotent(scope: string, key: string, bodyHash: string, answer: IdempotentAnswer): void;
  /** Runs `fn` as one write transaction (its own writes nest inside): all of it lands or none. */
  atomically<T>(fn: () => T): T;

  // --- keys
  /** The secret is returned once and stored only as a hash. */
  createKey(input: { name: string; role: string; scopes?: Scope[] | null }): { key: KeyOut; secret: string };
  listKeys(): KeyOut[];
  /** Revoking the last active owner key → 400 SCHEMA_VALIDATION_FAILED. */
  revokeKey(id: string): void;
  /** Constant-time comparison of the hash; null for unknown or revoked. */
  authenticate(secret: string): Actor | null;
  countActiveKeys(): number;

  // --- views and sources
  listViews(): StoredView[];
  findView(name: string): StoredView | undefined;
  /** A runtime view (contract §3): checked like a declared view; a source's view → 409 SCHEMA_DUPLICATE. */
  putView(name: string, decl: ViewDecl): StoredView;
  deleteView(name: string): void;
  /** GET /views/:name/records: the view's filter and sort, keyset pages, values cut to its columns. */
  runView(name: string, page: { limit?: number; cursor?: string }): SearchPage & { view: StoredView };
  findSource(id: string): StoredSource | undefined;

  /**
   * Files and documents (contract.md §3, engine/store/files.ts): present when the store was
   * opened with a folder for the bytes (`<data>/files`). The file routes answer 503 without it.
   */
  readonly files?: FilesApi;

  /** Read-only data probe for the planner (engine/plan/facts.ts). */
  facts(): DataFacts;

  /**
   * PUT /schema/sources/:id: plan with the pure planner, refuse by the contract's
   * order, otherwise apply every step in one transaction and bump the source version.
   */
  pushSource(id: string, declaration: Declaration, options: PushOptions): PushResult;
}
