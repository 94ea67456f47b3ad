/**
 * The shapes Studio reads from the API (contract.md §3): the wire types the server and the
 * SDK share (engine/model), imported as types only, so the page compiles against the same
 * definitions and ships none of the server's code.
 */
import type { DocumentOut, FileOut, Owner, RecordOut, SourceHistoryEntry, SourceOut, StoredAttribute, StoredObject, StoredView } from '../../model/stored.js';
import type { Filter } from '../../model/filter.js';
import type { SearchHit } from '../../model/search-hit.js';
import type { KeyOut, Scope } from '../../model/keys.js';

export type { DocumentOut, FileOut, Filter, KeyOut, Owner, RecordOut, Scope, SearchHit, SourceHistoryEntry, SourceOut };
export type ObjectInfo = StoredObject;
export type Attribute = StoredAttribute;
export type View = StoredView;



