import { createReadStream, statSync } from 'node:fs';
import { basename } from 'node:path';
import { pathSegment as seg, refuseIllFormed, type Transport } from './transport.js';

/**
 * Files and documents (contract.md §3 "Files and documents", §5 `files`, `documents`).
 * Uploads are streamed as a multipart body built on the fly — a 1 GB file costs a 64 KiB
 * buffer, not 1 GB — and, being streams, are never retried.
 */
import type { DocumentOut, FileOut } from '../model/stored.js';

/** The SDK's names for the API's file and document shapes (one definition: model/stored.ts). */
export type FileInfo = FileOut;
export type DocumentInfo = DocumentOut;

/** What to upload: a file on disk, or bytes / a stream with a name. */
export type UploadSource =
  | { path: string }
  | { data: Uint8Array | AsyncIterable<Uint8Array>; name: string; size?: number };

export interface UploadOptions {
  /** Stored name (default: the file's base name). */
  name?: string;
  /** Content type (default: guessed from the name's extension, else application/octet-stream). */
  mimeType?: string;
  /** Called as bytes leave: (sent, total or undefined when unknown). */
  onProgress?: (sent: number, total: number | undefined) => void;
}

const TYPES: Record<string, string> = {
  pdf: 'application/pdf', json: 'application/json', zip: 'application/zip', gz: 'application/gzip',
  txt: 'text/plain', md: 'text/markdown', csv: 'text/csv', html: 'text/html', htm: 'text/html', xml: 'application/xml',
  yaml: 'application/yaml', yml: 'application/yaml', png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg',
  gif: 'image/gif', webp: 'image/webp', svg: 'image/svg+xml', mp4: 'video/mp4', mp3: 'audio/mpeg',
  doc: 'application/msword', docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};

/** A content type from a file name's extension (the server checks `accepts` against it). */
export function guessMimeType(name: string): string {
  const ext = /\.([a-z0-9]+)$/i.exec(name)?.[1]?.toLowerCase();
  return (ext && TYPES[ext]) || 'application/octet-stream';
}

const CRLF = '\r\n';

/** A form-data parameter value as browsers write it: quotes and line breaks escaped. */
function quoteParam(v: string): string {
  return v.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

/** The multipart body: `fields`, then one `file` part streamed from `source`. */
function multipart(source: UploadSource, fields: Record<string, string>, options: UploadOptions) {
  const boundary = `----schemasync${Math.random().toString(16).slice(2)}${Date.now().toString(16)}`;
  const name = options.name ?? ('path' in source ? basename(source.path) : source.name);
  const mimeType = options.mimeType ?? guessMimeType(name);
  let head = '';
  for (const [k, v] of Object.entries(fields)) {
    head += `--${boundary}${CRLF}Content-Disposition: form-data; name="${k}"${CRLF}${CRLF}${v}${CRLF}`;
  }
  head += `--${boundary}${CRLF}Content-Disposition: form-data; name="file"; filename="${quoteParam(name)}"${CRLF}Content-Type: ${mimeType}${CRLF}${CRLF}`;
  const tail = `${CRLF}--${boundary}--${CRLF}`;
  const headBytes = Buffer.from(head, 'utf8');
  const tailBytes = Buffer.from(tail, 'utf8');
  const size = 'path' in source ? statSync(source.path).size : source.data instanceof Uint8Array ? source.data.length : source.size;

  async function* body(): AsyncGenerator<Uint8Array> {
    yield headBytes;
    let sent = 0;
    const chunks: AsyncIterable<Uint8Array> | Uint8Array[] =
      'path' in source ? createReadStream(source.path, { highWaterMark: 256 * 1024 }) : source.data instanceof Uint8Array ? [source.data] : source.data;
    for await (const chunk of chunks) {
      sent += chunk.length;
      yield chunk;
      options.onProgress?.(sent, size);
    }
    yield tailBytes;
  }

  return {
    body: body(),
    contentType: `multipart/form-data; boundary=${boundary}`,
    ...(size !== undefined ? { contentLength: headBytes.length + size + tailBytes.length } : {}),
  };
}

export class FilesApi {
  constructor(private readonly t: Transport) {}

  /** POST /files. */
  async upload(source: UploadSource, options: UploadOptions = {}): Promise<FileInfo> {
    return (await this.t.request<FileInfo>('POST', '/files', { raw: multipart(source, {}, options) })).data;
  }

  /** POST /upload/:object/:recordId/:attribute: upload and attach in one call. */
  async uploadTo(
    target: { object: string; recordId: string; attribute: string },
    source: UploadSource,
    options: UploadOptions & { title?: string } = {},
  ): Promise<DocumentInfo> {
    const fields = options.title !== undefined ? { title: options.title } : {};
    // Encoded into the multipart body, an unpaired surrogate would silently become U+FFFD.
    refuseIllFormed(fields, '');
    const path = `/upload/${seg(target.object, 'Object')}/${seg(target.recordId, 'Record id')}/${seg(target.attribute, 'Attribute')}`;
    return (await this.t.request<DocumentInfo>('POST', path, { raw: multipart(source, fields, options) })).data;
  }

  async get(id: string): Promise<FileInfo> {
    return (await this.t.request<FileInfo>('GET', `/files/${seg(id, 'File id')}`)).data;
  }

  /** GET /files/:id/content: the Response, so the caller streams `body` wherever it likes. */
  async download(id: string): Promise<Response> {
    return this.t.download(`/files/${seg(id, 'File id')}/content`);
  }

  async rename(id: string, name: string): Promise<FileInfo> {
    return (await this.t.request<FileInfo>('PUT', `/files/${seg(id, 'File id')}`, { body: { name } })).data;
  }

  async delete(id: string): Promise<{ id: string }> {
    return (await this.t.request<{ id: string }>('DELETE', `/files/${seg(id, 'File id')}`)).data;
  }
}

export class DocumentsApi {
  constructor(private readonly t: Transport) {}

  async get(id: string): Promise<DocumentInfo> {
    return (await this.t.request<DocumentInfo>('GET', `/documents/${seg(id, 'Document id')}`)).data;
  }

  /** PATCH /documents/:id { title }. */
  async update(id: string, patch: { title: string }): Promise<DocumentInfo> {
    return (await this.t.request<DocumentInfo>('PATCH', `/documents/${seg(id, 'Document id')}`, { body: patch })).data;
  }

  async delete(id: string): Promise<{ id: string }> {
    return (await this.t.request<{ id: string }>('DELETE', `/documents/${seg(id, 'Document id')}`)).data;
  }
}
