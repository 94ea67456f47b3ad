import type { AttributeType } from '../../model/attribute.js';
import type { Backend, Codec, Dialect, FulltextPort, SchemaDdl } from '../port.js';
import type { Catalog } from './catalog.js';
import type { FilesService } from './files-service.js';
import type { SourceCache } from './sources-cache.js';

/**
 * What every module of the backend-neutral core works with: the backend's parts, the
 * process's caches, and files and documents. Passed explicitly (no module reaches into
 * another's tables: each owns its `_ss_` tables and exports functions over an Executor).
 */
export interface Core {
  readonly backend: Backend;
  readonly dialect: Dialect;
  readonly codecs: Record<AttributeType, Codec>;
  readonly ddl: SchemaDdl;
  readonly fulltext: FulltextPort;
  readonly catalog: Catalog;
  readonly sources: SourceCache;
  /**
   * Present when the store was opened with a folder for file bytes. Record and schema writes
   * call `files.documents` inside their transaction (sql/documents.ts: it never writes a
   * record) and `files.begin()` / `files.ended()` around it (file-bytes.ts).
   */
  readonly files?: FilesService;
}
