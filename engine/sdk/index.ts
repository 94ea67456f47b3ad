/** `schemasync/sdk` (contract.md §5). */
export { SchemaClient, RecordsApi, SchemaApi, SourcesApi, KeysApi, ViewsApi, RolesApi } from './client.js';
export type { PushAnswer, PushOptions, SearchOptions, RecordPage, SearchHit, CrossSearchOptions, KeyCreated, KeyOut, KeySelf, RuntimeAttribute, RoleOut, Scope } from './client.js';
export type { AttributePatch } from '../model/attribute.js';
export { ServiceRequestError, ServiceAuthError } from './errors.js';
export { Transport, type ClientOptions, type RequestOptions, type Answer } from './transport.js';
export { FilesApi, DocumentsApi, guessMimeType, type FileInfo, type DocumentInfo, type UploadSource, type UploadOptions } from './files.js';
