import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ServiceError } from '../../errors.js';
import type { DocumentOut, FileOut } from '../../model/stored.js';
import type { Actor, FilesApi, Store } from '../../store/types.js';
import { actorOf, type RouteDeps } from '../context.js';
import { RequestValidationError, ok } from '../envelope.js';
import { requirePermission } from '../permissions.js';
import * as s from '../schemas/files.js';

interface IdParams { id: string }
interface UploadParams { objectName: string; recordId: string; attribute: string }

function filesOf(store: Store): FilesApi {
  const files = store.files;
  if (!files) {
    throw new ServiceError('CONFIGURATION_REQUIRED', 'This store keeps no files (it was opened without a data folder)');
  }
  return files;
}

/**
 * Files and documents (contract.md §3 "Files and documents"). Multipart bodies are read
 * part by part and the `file` part is handed to the store as a stream, never buffered
 * (issue 5); the limits are the store's (maxFileSize per attribute, the server cap for
 * POST /files), enforced while the bytes arrive. The upload routes count in the upload
 * rate bucket (rate-limit.ts bucketFor: POST /files…, /upload…).
 */
export async function fileRoutes(app: FastifyInstance, { store }: RouteDeps): Promise<void> {
  // Registered in this plugin only, so no other route accepts multipart bodies. The size
  // limit is ours (blobs.ts aborts the stream as soon as it is passed), not busboy's
  // silent truncation.
  await app.register(multipart, {
    limits: { fileSize: Number.MAX_SAFE_INTEGER, files: 1, fields: 10, fieldSize: 64 * 1024, parts: 20 },
    // Larger file-stream buffers mean fewer, bigger writes (upload bench); still bounded.
    fileHwm: 1024 * 1024,
  });

  const read = { action: 'files:read' } as const;
  const write = { action: 'files:write' } as const;

  app.post('/files', { schema: s.uploadFileSchema, config: { ...write, swaggerTransform: s.uploadFileDocs } }, async (request, reply) => {
    const actor = actorOf(request);
    const files = filesOf(store);
    const file = await readMultipart<FileOut>(request, (part, _title, untilBodyEnds) =>
      files.uploadFile({ name: part.filename, mimeType: part.mimetype, stream: part.file, untilBodyEnds }, actor),
    );
    return reply.code(201).send(ok(file));
  });

  app.get<{ Params: IdParams }>('/files/:id', { schema: s.getFileSchema, config: read }, async (request) =>
    ok(await filesOf(store).getFile(request.params.id)),
  );

  app.get<{ Params: IdParams }>('/files/:id/content', { schema: s.fileContentSchema, config: { ...read, swaggerTransform: s.fileContentDocs } }, async (request, reply) => {
    const { file, stream } = await filesOf(store).openFile(request.params.id);
    reply
      .header('content-type', file.mimeType)
      .header('content-length', String(file.size))
      .header('etag', `"${file.sha256}"`)
      // The stored type is the uploader's claim: never let a browser sniff it into HTML.
      .header('x-content-type-options', 'nosniff')
      .header('content-disposition', contentDisposition(file.name));
    return reply.send(stream);
  });

  app.put<{ Params: IdParams; Body: { name: string } }>('/files/:id', { schema: s.renameFileSchema, config: write }, async (request) =>
    ok(await filesOf(store).renameFile(request.params.id, request.body.name, actorOf(request))),
  );

  app.delete<{ Params: IdParams }>('/files/:id', { schema: s.deleteFileSchema, config: write }, async (request) =>
    ok(await filesOf(store).deleteFile(request.params.id, actorOf(request))),
  );

  app.post<{ Params: UploadParams }>(
    '/upload/:objectName/:recordId/:attribute',
    { schema: s.uploadDocumentSchema, config: { ...write, swaggerTransform: s.uploadDocumentDocs } },
    async (request, reply) => {
      const actor = actorOf(request);
      const { objectName, recordId, attribute } = request.params;
      // Attaching changes the record too.
      requirePermission(actor, 'records:write', { object: objectName, record: 'update' });
      const files = filesOf(store);
      const doc = await readMultipart<DocumentOut>(request, (part, title, untilBodyEnds) =>
        files.uploadDocument(
          { object: objectName, recordId, attribute },
          { name: part.filename, mimeType: part.mimetype, stream: part.file, title, untilBodyEnds },
          actor,
        ),
      );
      return reply.code(201).send(ok(doc));
    },
  );

  app.get<{ Params: IdParams }>('/documents/:id', { schema: s.getDocumentSchema, config: read }, async (request) =>
    ok(await filesOf(store).getDocument(request.params.id)),
  );

  // Renaming or detaching a document changes its record (what it shows, what search finds):
  // a custom role needs update on the document's object, for both alike.
  const mayUpdateRecordOf = (actor: Actor, doc: { object: string }): void => {
    requirePermission(actor, 'records:write');
    requirePermission(actor, 'records:write', { object: doc.object, record: 'update' });
  };

  app.patch<{ Params: IdParams; Body: { title: string } }>('/documents/:id', { schema: s.patchDocumentSchema, config: write }, async (request) => {
    const actor = actorOf(request);
    return ok(await filesOf(store).renameDocument(request.params.id, request.body.title, (doc) => mayUpdateRecordOf(actor, doc)));
  });

  app.delete<{ Params: IdParams }>('/documents/:id', { schema: s.deleteDocumentSchema, config: write }, async (request) => {
    const actor = actorOf(request);
    mayUpdateRecordOf(actor, await filesOf(store).getDocument(request.params.id));
    return ok(await filesOf(store).deleteDocument(request.params.id, actor));
  });
}

interface FilePart {
  filename: string;
  mimetype: string;
  file: NodeJS.ReadableStream & import('node:stream').Readable;
}

/**
 * Walk the multipart body: collect `title`, hand the one `file` part to `consume` as a
 * stream together with `untilBodyEnds`, which reads the body to its end (a `title` after
 * the file, or busboy's refusal of a second file part). The store awaits it after the
 * bytes are on disk and before it commits, so a body refused after its file part leaves
 * no row and no bytes (issue 5: "a refused upload leaves no bytes and no row"). On any
 * failure the rest of the request body is discarded, so the client gets its answer
 * instead of a stalled upload.
 */
async function readMultipart<T>(
  request: FastifyRequest,
  consume: (part: FilePart, title: string | undefined, untilBodyEnds: () => Promise<{ title?: string | undefined }>) => Promise<T>,
): Promise<T> {
  if (!request.isMultipart()) {
    throw new ServiceError('SCHEMA_VALIDATION_FAILED', 'Send the file as multipart/form-data with a field named file', {
      errors: [{ path: ['file'], message: 'body must be multipart/form-data with a file field' }],
    });
  }
  const parts = request.parts()[Symbol.asyncIterator]();
  /** The first failure the multipart parser reported: the body could not be read. */
  let parseFailure: { err: unknown } | undefined;
  const pull = async () => {
    try {
      return await parts.next();
    } catch (err) {
      parseFailure ??= { err };
      throw err;
    }
  };
  let title: string | undefined;
  let lateTitle: string | undefined;
  let file: FilePart | undefined;
  let done: { result: T } | undefined;
  /** One part after another until the body ends; returns the file part when it comes. */
  const next = async (): Promise<FilePart | undefined> => {
    for (let n = await pull(); n.done !== true; n = await pull()) {
      const part = n.value;
      if (part.type === 'field') {
        if (part.fieldname === 'title' && typeof part.value === 'string') {
          if (file) lateTitle = part.value;
          else title = part.value;
        }
        continue;
      }
      if (part.fieldname !== 'file' || file) {
        part.file.resume(); // not ours: drain it
        continue;
      }
      file = part as unknown as FilePart;
      return file;
    }
    return undefined;
  };
  const untilBodyEnds = async (): Promise<{ title?: string | undefined }> => {
    await next(); // after the file part, next() only returns at the end of the body
    return { title: lateTitle };
  };
  try {
    const first = await next();
    if (first) {
      done = { result: await consume(first, title, untilBodyEnds) };
      // The store awaited untilBodyEnds before committing; this only confirms the end.
      await next();
    }
  } catch (err) {
    // A file stream that broke off mid-part fails the store's write with the stream's
    // error, not the parser's. Whether the body was at fault only the parser can say: it
    // reports its failure next, or ends quietly when the write failed on our side (a
    // full disk stays a 500). Asked only then, since a parser still reading a healthy
    // body would wait for the client.
    if (!parseFailure && !(err instanceof ServiceError) && file && !file.file.readableEnded) {
      await pull().catch(() => undefined);
    }
    discardRest(request);
    throw multipartError(err, parseFailure);
  }
  if (!done) {
    throw new ServiceError('SCHEMA_VALIDATION_FAILED', 'The multipart body has no file field', {
      errors: [{ path: ['file'], message: 'a part named file is required' }],
    });
  }
  return done.result;
}

/** Stop parsing and let the socket drain; `connection: close` ends it after the answer. */
function discardRest(request: FastifyRequest): void {
  const raw = request.raw;
  raw.unpipe();
  raw.on('error', () => undefined);
  raw.resume();
}

/**
 * In the envelope's terms: busboy's part limits are the route's one-file rule; any other
 * failure of the parser (no boundary, no closing delimiter, a malformed part header, a
 * `__proto__` field name…) means the body could not be parsed, 400 Validation failed
 * (service-interface.md Errors rule 1) — never a 5xx a client would retry. A refusal of
 * the store keeps its code; anything else is ours and stays a masked 500.
 */
function multipartError(err: unknown, parseFailure: { err: unknown } | undefined): unknown {
  if (err instanceof ServiceError) return err;
  const cause = (parseFailure?.err ?? err) as { code?: string; message?: string };
  const code = cause.code;
  if (code === 'FST_FILES_LIMIT' || code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT') {
    return new ServiceError('SCHEMA_VALIDATION_FAILED', 'Too many parts: send one file field (and optionally title)', {
      errors: [{ path: ['file'], message: 'one file per request' }],
    });
  }
  if (parseFailure || code === 'FST_INVALID_MULTIPART_CONTENT_TYPE' || code === 'FST_PROTO_VIOLATION') {
    return new RequestValidationError([{ path: [], message: `the multipart body could not be read: ${String(cause.message)}` }]);
  }
  return err;
}

/** RFC 6266 with an RFC 5987 UTF-8 name; the ASCII fallback drops anything unsafe in a header. */
function contentDisposition(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}
