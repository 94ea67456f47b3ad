/**
 * The shapes Studio reads from the API (contract.md §3): the wire types the server and the
 * SDK share (engine/model), imported as types only, so the page compiles against the same
 * definitions and ships none of the server's code. A key as GET /keys lists it has no shared
 * definition yet, so it is written out below.
 */
import type { DocumentOut, FileOut, Owner, RecordOut, StoredAttribute, StoredObject, StoredView } from '../../model/stored.js';
import type { Filter } from '../../model/filter.js';
import type { SearchHit } from '../../model/search-hit.js';

export type { DocumentOut, FileOut, Filter, Owner, RecordOut, SearchHit };
export type ObjectInfo = StoredObject;
export type Attribute = StoredAttribute;
export type View = StoredView;

export interface KeyOut {
  id: string;
  name: string;
  role: string;
  scopes: string[] | null;
  createdAt?: string;
  revokedAt?: string | null;
  lastUsedAt?: string | null;
}


