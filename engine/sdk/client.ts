import type { AttributePatch, AttributeSpec } from '../model/attribute.js';
import type { Declaration, ViewDecl } from '../model/declaration.js';
import type { Filter, SortSpec } from '../model/filter.js';
import type { RoleDecl } from '../model/roles.js';
import type { RecordOut, SourceHistoryEntry, SourceOut, StoredAttribute, StoredObject, StoredRole, StoredSource, StoredView } from '../model/stored.js';
import type { SearchHit } from '../model/search-hit.js';
import type { KeyCreated, KeyOut, Scope } from '../model/keys.js';
export type { KeyCreated, KeyOut, Scope };
import type { PushAnswer, PushChoices, PushRequest } from '../plan/push.js';
import { DocumentsApi, FilesApi } from './files.js';
import { pathSegment as seg, Transport, type ClientOptions } from './transport.js';

export interface SearchOptions {
  filter?: Filter;
  sort?: SortSpec[];
  limit?: number;
  cursor?: string;
}

export type { SearchHit };

/** One page of records (POST /records/:object/search, GET /views/:name/records). */
export interface RecordPage {
  records: RecordOut[];
  nextCursor: string | null;
  total?: number;
}

export interface CrossSearchOptions {
  query: string;
  objects?: string[];
  limit?: number;
}

/** A push's options and answer: the wire types the server shares (engine/plan/push.ts). */
export type PushOptions = PushChoices;
export type { PushAnswer };


/** An attribute a runtime route takes: `renamedFrom` is a declaration-file hint for sync (400 here). */
export type RuntimeAttribute = Omit<AttributeSpec, 'renamedFrom'>;

/** Records of one object (contract.md §3 "Records"). */
export class RecordsApi {
  constructor(private readonly t: Transport, private readonly object: string) {}

  private path(suffix = ''): string {
    return `/records/${seg(this.object, 'Object name')}${suffix}`;
  }

  /** The SDK sends its own idempotency-key so a retried create never writes twice. */
  async create(values: Record<string, unknown>, options: { idempotencyKey?: string } = {}): Promise<RecordOut> {
    return (await this.t.request<RecordOut>('POST', this.path(), { body: values, idempotencyKey: options.idempotencyKey ?? true })).data;
  }
  async get(id: string): Promise<RecordOut> {
    return (await this.t.request<RecordOut>('GET', this.path(`/${seg(id, 'Record id')}`))).data;
  }
  /** With a version in ifMatch it is sent once, never retried: a repeat of an update that landed would answer 409. */
  async update(id: string, patch: Record<string, unknown>, options: { ifMatch: number | '*' }): Promise<RecordOut> {
    const ifMatch = options.ifMatch === '*' ? '*' : `"${options.ifMatch}"`;
    return (await this.t.request<RecordOut>('PUT', this.path(`/${seg(id, 'Record id')}`), { body: patch, headers: { 'if-match': ifMatch } })).data;
  }
  /** Sent once, never retried: a repeat of a delete that landed would answer 404. */
  async delete(id: string): Promise<{ id: string }> {
    return (await this.t.request<{ id: string }>('DELETE', this.path(`/${seg(id, 'Record id')}`))).data;
  }
  async bulkCreate(records: Record<string, unknown>[], options: { idempotencyKey?: string } = {}): Promise<RecordOut[]> {
    return (await this.bulkCreateReplayable(records, options)).records;
  }
  /**
   * bulkCreate, also saying whether the service replayed the answer it gave an earlier
   * request with the same idempotency key (header `idempotent-replayed`) instead of writing:
   * how `records import` tells a batch a crashed run already wrote.
   */
  async bulkCreateReplayable(records: Record<string, unknown>[], options: { idempotencyKey?: string } = {}): Promise<{ records: RecordOut[]; replayed: boolean }> {
    const a = await this.t.request<{ records: RecordOut[] }>('POST', this.path('/bulk-create'), { body: { records }, idempotencyKey: options.idempotencyKey ?? true });
    return { records: a.data.records, replayed: a.headers.get('idempotent-replayed') === 'true' };
  }
  /**
   * bulk-create for a caller that needs no records back (`records import`): says only whether
   * the service replayed an earlier answer; the answer's body is read and dropped unparsed.
   * An item given as a string is that record as JSON text already (the line of a file that
   * JSON.parse made into the record), sent as it is instead of serialising the record again;
   * the caller promises it is one JSON object. The check for values no service accepts
   * (transport.ts refuseIllFormed) reads the text when it looks like it holds one.
   */
  async bulkCreateUnanswered(records: readonly (Record<string, unknown> | string)[], options: { idempotencyKey?: string } = {}): Promise<{ replayed: boolean }> {
    const json = `{"records":[${records.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join(',')}]}`;
    // `Prefer: return=minimal`: the service answers a count, not the records again, so it
    // neither builds nor remembers ~250 KB per 1,000 rows; a service that ignores the
    // preference answers the records, read and dropped all the same.
    const a = await this.t.request<undefined>('POST', this.path('/bulk-create'), {
      json,
      headers: { prefer: 'return=minimal' },
      idempotencyKey: options.idempotencyKey ?? true,
      discardSuccessBody: true,
    });
    return { replayed: a.headers.get('idempotent-replayed') === 'true' };
  }
  async bulkUpdate(records: { id: string; version?: number; values: Record<string, unknown> }[], options: { idempotencyKey?: string } = {}): Promise<RecordOut[]> {
    return (await this.t.request<{ records: RecordOut[] }>('POST', this.path('/bulk-update'), { body: { records }, idempotencyKey: options.idempotencyKey ?? true })).data.records;
  }
  async bulkDelete(ids: string[], options: { idempotencyKey?: string } = {}): Promise<{ deleted: number }> {
    return (await this.t.request<{ deleted: number }>('POST', this.path('/bulk-delete'), { body: { ids }, idempotencyKey: options.idempotencyKey ?? true })).data;
  }
  /** Read-only, so safe to retry although it is a POST. */
  async search(options: SearchOptions = {}): Promise<RecordPage> {
    const a = await this.t.request<RecordOut[]>('POST', this.path('/search'), { body: options, idempotent: true });
    return { records: a.data, nextCursor: a.page?.nextCursor ?? null, ...(a.page?.total !== undefined ? { total: a.page.total } : {}) };
  }
  /**
   * Every record matching `filter`, page by page (contract.md §5: "an async iterator over
   * every page"); keyset cursors, so records inserted meanwhile never repeat one already seen.
   */
  async *iterate(options: Omit<SearchOptions, 'cursor'> = {}): AsyncGenerator<RecordOut> {
    let cursor: string | undefined;
    do {
      const page = await this.search({ ...options, ...(cursor !== undefined ? { cursor } : {}) });
      yield* page.records;
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
  }
}

export class SchemaApi {
  constructor(private readonly t: Transport) {}
  async listObjects(): Promise<StoredObject[]> {
    return (await this.t.request<StoredObject[]>('GET', '/schema/objects')).data;
  }
  async getObject(idOrName: string): Promise<StoredObject> {
    return (await this.t.request<StoredObject>('GET', `/schema/objects/${seg(idOrName, 'Object')}`)).data;
  }
  async createObject(input: { name: string; label?: string; attributes?: RuntimeAttribute[] }): Promise<StoredObject> {
    return (await this.t.request<StoredObject>('POST', '/schema/objects', { body: input })).data;
  }
  async deleteObject(idOrName: string, options: { force?: boolean } = {}): Promise<void> {
    await this.t.request('DELETE', `/schema/objects/${seg(idOrName, 'Object')}`, { query: { force: options.force ? 'true' : undefined } });
  }
  async addAttribute(object: string, spec: RuntimeAttribute): Promise<StoredAttribute> {
    return (await this.t.request<StoredAttribute>('POST', `/schema/objects/${seg(object, 'Object')}/attributes`, { body: spec })).data;
  }
  /** `null` for a field removes it (a constraint loosened, a field the new type does not take). */
  async updateAttribute(object: string, attribute: string, patch: AttributePatch): Promise<StoredAttribute> {
    return (await this.t.request<StoredAttribute>('PUT', `/schema/objects/${seg(object, 'Object')}/attributes/${seg(attribute, 'Attribute')}`, { body: patch })).data;
  }
  async deleteAttribute(object: string, attribute: string): Promise<void> {
    await this.t.request('DELETE', `/schema/objects/${seg(object, 'Object')}/attributes/${seg(attribute, 'Attribute')}`);
  }
}

export class SourcesApi {
  constructor(private readonly t: Transport) {}
  async get(id: string): Promise<SourceOut> {
    return (await this.t.request<SourceOut>('GET', `/schema/sources/${seg(id, 'Source id')}`)).data;
  }
  /**
   * PUT /schema/sources/:id. A push is a whole-state replace, so repeating it is safe
   * (a repeat plans zero steps), which is why the transport may retry it — unless it carries
   * ifMatch: then a repeat of a push that landed would meet the new version and answer 409,
   * so it is sent once.
   */
  async push(id: string, declaration: Declaration, options: PushOptions = {}): Promise<PushAnswer> {
    const body: PushRequest = { declaration };
    if (options.dryRun !== undefined) body.dryRun = options.dryRun;
    if (options.allowDestructive !== undefined) body.allowDestructive = options.allowDestructive;
    if (options.expectPlan !== undefined) body.expectPlan = options.expectPlan;
    const headers: Record<string, string> = options.ifMatch !== undefined ? { 'if-match': `"${options.ifMatch}"` } : {};
    // expectPlan, like ifMatch: a repeat of a push that landed plans nothing, another hash, a 409
    const once = options.expectPlan !== undefined && options.dryRun !== true ? { idempotent: false } : {};
    return (await this.t.request<PushAnswer>('PUT', `/schema/sources/${seg(id, 'Source id')}`, { body, headers, ...once })).data;
  }
  /** GET /schema/sources/:id/history: one page of pushes, newest first. */
  async history(id: string, options: { limit?: number; cursor?: string } = {}): Promise<{ entries: SourceHistoryEntry[]; nextCursor: string | null }> {
    const a = await this.t.request<SourceHistoryEntry[]>('GET', `/schema/sources/${seg(id, 'Source id')}/history`, { query: options });
    return { entries: a.data, nextCursor: a.page?.nextCursor ?? null };
  }
}

/** GET /keys/self: the calling key as far as its rights go (no secret). */
export interface KeySelf {
  id: string;
  name: string;
  role: string;
  scopes: string[] | null;
  /** What the key may do: the actions both its role and its scopes allow. */
  actions: string[];
}

export class KeysApi {
  constructor(private readonly t: Transport) {}
  /** Any key may ask about itself (no keys:manage needed). */
  async self(): Promise<KeySelf> {
    return (await this.t.request<KeySelf>('GET', '/keys/self')).data;
  }
  async create(input: { name: string; role: string; scopes?: string[] }): Promise<KeyCreated> {
    return (await this.t.request<KeyCreated>('POST', '/keys', { body: input })).data;
  }
  async list(): Promise<KeyOut[]> {
    return (await this.t.request<KeyOut[]>('GET', '/keys')).data;
  }
  async revoke(id: string): Promise<void> {
    await this.t.request('DELETE', `/keys/${seg(id, 'Key id')}`);
  }
}

export class ViewsApi {
  constructor(private readonly t: Transport) {}
  async list(): Promise<StoredView[]> {
    return (await this.t.request<StoredView[]>('GET', '/views')).data;
  }
  async get(name: string): Promise<StoredView> {
    return (await this.t.request<StoredView>('GET', `/views/${seg(name, 'View name')}`)).data;
  }
  async put(name: string, view: ViewDecl): Promise<StoredView> {
    return (await this.t.request<StoredView>('PUT', `/views/${seg(name, 'View name')}`, { body: view })).data;
  }
  async delete(name: string): Promise<void> {
    await this.t.request('DELETE', `/views/${seg(name, 'View name')}`);
  }
  /** GET /views/:name/records: one page of the view (its filter, sort and columns). */
  async run(name: string, options: { limit?: number; cursor?: string } = {}): Promise<{ records: RecordOut[]; nextCursor: string | null }> {
    const query = { limit: options.limit, cursor: options.cursor };
    const a = await this.t.request<RecordOut[]>('GET', `/views/${seg(name, 'View name')}/records`, { query });
    return { records: a.data, nextCursor: a.page?.nextCursor ?? null };
  }
  /** Every record of the view, page by page. */
  async *iterate(name: string, options: { pageSize?: number } = {}): AsyncGenerator<RecordOut> {
    let cursor: string | undefined;
    do {
      const page = await this.run(name, { ...(options.pageSize !== undefined ? { limit: options.pageSize } : {}), ...(cursor !== undefined ? { cursor } : {}) });
      yield* page.records;
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
  }
}

/** A role as GET /roles answers it: built-in ones in the same shape as custom ones. */
export interface RoleOut extends RoleDecl {
  name: string;
  builtIn: boolean;
  schema: NonNullable<RoleDecl['schema']>;
  keys: 'manage' | 'none';
  owner?: StoredRole['owner'];
}

/** Roles (contract.md §3 "Roles, keys, views"); declared roles come with a source push. */
export class RolesApi {
  constructor(private readonly t: Transport) {}
  async list(): Promise<RoleOut[]> {
    return (await this.t.request<RoleOut[]>('GET', '/roles')).data;
  }
  async get(name: string): Promise<RoleOut> {
    return (await this.t.request<RoleOut>('GET', `/roles/${seg(name, 'Role name')}`)).data;
  }
  async create(name: string, role: RoleDecl): Promise<RoleOut> {
    return (await this.t.request<RoleOut>('POST', '/roles', { body: { name, ...role } })).data;
  }
  /** Replaces the role's definition (a whole-state write, so safe to repeat). */
  async update(name: string, role: RoleDecl): Promise<RoleOut> {
    return (await this.t.request<RoleOut>('PUT', `/roles/${seg(name, 'Role name')}`, { body: role })).data;
  }
  async delete(name: string): Promise<void> {
    await this.t.request('DELETE', `/roles/${seg(name, 'Role name')}`);
  }
}

/** The HTTP client of contract.md §5, used by the CLI for every call. */
export class SchemaClient {
  readonly transport: Transport;
  readonly schema: SchemaApi;
  readonly sources: SourcesApi;
  readonly keys: KeysApi;
  readonly views: ViewsApi;
  readonly roles: RolesApi;
  /** Files and documents (engine/sdk/files.ts). */
  readonly files: FilesApi;
  readonly documents: DocumentsApi;

  constructor(options: ClientOptions) {
    this.transport = new Transport(options);
    this.schema = new SchemaApi(this.transport);
    this.sources = new SourcesApi(this.transport);
    this.keys = new KeysApi(this.transport);
    this.views = new ViewsApi(this.transport);
    this.roles = new RolesApi(this.transport);
    this.files = new FilesApi(this.transport);
    this.documents = new DocumentsApi(this.transport);
  }

  get baseUrl(): string {
    return this.transport.baseUrl;
  }

  records(object: string): RecordsApi {
    return new RecordsApi(this.transport, object);
  }

  /** POST /search: read-only, so safe to retry although it is a POST. */
  async search(options: CrossSearchOptions): Promise<SearchHit[]> {
    return (await this.transport.request<SearchHit[]>('POST', '/search', { body: options, idempotent: true })).data;
  }

  /** GET /global-search over every object the key may read. */
  async globalSearch(q: string, options: { limit?: number } = {}): Promise<SearchHit[]> {
    const params = new URLSearchParams({ q });
    if (options.limit !== undefined) params.set('limit', String(options.limit));
    return (await this.transport.request<SearchHit[]>('GET', `/global-search?${params.toString()}`)).data;
  }

  async health(): Promise<unknown> {
    return (await this.transport.request('GET', '/health')).data;
  }
}
