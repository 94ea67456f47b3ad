/**
 * The shapes Studio reads from the API (contract.md §3). Kept here rather than imported from
 * engine/model because the page is compiled for the browser on its own, with no path into
 * the server's code: it can only know what the wire says.
 */
export interface Owner {
  kind: 'core' | 'bundle' | 'source' | 'runtime';
  id?: string;
}

export interface Attribute {
  id: string;
  name: string;
  type: string;
  label?: string;
  description?: string;
  required?: boolean;
  unique?: boolean;
  default?: unknown;
  min?: number;
  max?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  options?: string[];
  target?: string;
  multiple?: boolean;
  accepts?: string[];
  maxFileSize?: number;
  protected: boolean;
  system: boolean;
  owner: Owner;
}

export interface ObjectInfo {
  id: string;
  name: string;
  label?: string;
  description?: string;
  owner: Owner;
  protected: boolean;
  attributes: Attribute[];
}

export interface RecordOut {
  id: string;
  object: string;
  version: number;
  createdAt: string;
  updatedAt: string;
  values: Record<string, unknown>;
}

export interface DocumentOut {
  id: string;
  title: string;
  fileId: string;
  object: string;
  recordId: string;
  attribute: string;
  createdAt: string;
}

export interface FileOut {
  id: string;
  name: string;
  mimeType: string;
  size: number;
}

export interface View {
  name: string;
  object: string;
  label?: string;
  filter?: unknown;
  sort?: { attribute: string; direction?: 'asc' | 'desc' }[];
  columns?: string[];
  owner: Owner;
}

export interface KeyOut {
  id: string;
  name: string;
  role: string;
  scopes: string[] | null;
  createdAt?: string;
  revokedAt?: string | null;
  lastUsedAt?: string | null;
}

export interface SearchHit {
  object: string;
  id: string;
  score: number;
  snippet: string;
  highlights: [number, number][];
  attribute: string;
}

export type Filter = Record<string, unknown>;
