import { MAX_DOCUMENT_TITLE_LENGTH, MAX_FILE_NAME_LENGTH } from '../../model/file-names.js';
import { deletedIdSchema, errorResponses, idParam, lookupParams, responses, securityRequired } from './common.js';

/**
 * Files and documents (contract.md §3 "Files and documents"). Upload bodies are
 * multipart/form-data, streamed by @fastify/multipart rather than validated as JSON (a
 * `body` schema would have Fastify validate a body it never parses), and the bytes of
 * /content are a stream, not serialised: both shapes reach openapi.json through a
 * per-route `swaggerTransform` (docs only); the JSON bodies are validated as usual.
 */
type SwaggerTransform = (input: { schema: object; url: string }) => { schema: object; url: string };

/** A multipart request body for openapi.json only: `file` (binary) plus these text fields. */
function multipartDocs(fields: Record<string, object> = {}): SwaggerTransform {
  const body = {
    type: 'object',
    required: ['file'],
    properties: { file: { type: 'string', format: 'binary', description: 'the file; its part carries the file name and content type' }, ...fields },
  };
  return ({ schema, url }) => ({ url, schema: { ...schema, body } });
}

export const uploadFileDocs = multipartDocs();
export const uploadDocumentDocs = multipartDocs({
  title: { type: 'string', maxLength: MAX_DOCUMENT_TITLE_LENGTH, description: "the document's title (default: the file name)" },
});

/** The bytes, in the stored content type, for openapi.json only. */
export const fileContentDocs: SwaggerTransform = ({ schema, url }) => ({
  url,
  schema: {
    ...schema,
    response: {
      200: {
        description: "The file's bytes, with its stored content type",
        headers: { etag: { type: 'string', description: 'The sha256 of the bytes, quoted' } },
        content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
      },
      ...errorResponses,
    },
  },
});
export const fileOut = {
  type: 'object',
  required: ['id', 'name', 'mimeType', 'size', 'sha256', 'uploadedBy', 'createdAt'],
  properties: {
    id: { type: 'string' },
    name: { type: 'string', description: 'The uploaded file name: metadata only' },
    mimeType: { type: 'string' },
    size: { type: 'integer', description: 'bytes' },
    sha256: { type: 'string' },
    uploadedBy: { type: ['string', 'null'], description: 'id of the API key that uploaded it' },
    createdAt: { type: 'string' },
  },
} as const;

export const documentOut = {
  type: 'object',
  required: ['id', 'title', 'fileId', 'object', 'recordId', 'attribute', 'createdAt'],
  properties: {
    id: { type: 'string' },
    title: { type: 'string' },
    fileId: { type: 'string' },
    object: { type: 'string' },
    recordId: { type: 'string' },
    attribute: { type: 'string' },
    createdAt: { type: 'string' },
  },
} as const;

const fileId = idParam('id', 'the file id');
const documentId = idParam('id', 'the document id');

export const uploadFileSchema = {
  operationId: 'uploadFile',
  tags: ['files'], security: securityRequired,
  summary: 'Upload a file (multipart/form-data, field `file`)',
  description:
    'Streamed to disk while hashing; never held in memory. Over the server limit → 413 PAYLOAD_TOO_LARGE, nothing kept. ' +
    `The client's file name is kept as metadata: its last path segment, control characters dropped, cut to ${MAX_FILE_NAME_LENGTH} characters keeping the extension.`,
  consumes: ['multipart/form-data'],
  response: responses(201, fileOut),
};

export const getFileSchema = {
  operationId: 'getFile',
  tags: ['files'], security: securityRequired, summary: "A file's metadata",
  params: fileId,
  response: responses(200, fileOut),
};

export const fileContentSchema = {
  operationId: 'getFileContent',
  tags: ['files'], security: securityRequired, summary: "A file's bytes, with its content type",
  params: fileId,
};

export const renameFileSchema = {
  operationId: 'renameFile',
  tags: ['files'], security: securityRequired, summary: "Rename a file (someone else's upload → 500 SCHEMA_ACCESS_DENIED unless owner or admin)",
  params: fileId,
  body: {
    type: 'object',
    required: ['name'],
    additionalProperties: false,
    properties: { name: { type: 'string', minLength: 1, maxLength: MAX_FILE_NAME_LENGTH, description: 'stored as sent: no control characters, bidirectional overrides, / or \\, no surrounding whitespace' } },
  },
  response: responses(200, fileOut),
};

export const deleteFileSchema = {
  operationId: 'deleteFile',
  tags: ['files'], security: securityRequired,
  summary: "Delete a file (someone else's upload → 500 SCHEMA_ACCESS_DENIED unless owner or admin)",
  params: fileId,
  response: responses(200, deletedIdSchema),
};

export const uploadDocumentSchema = {
  operationId: 'uploadDocument',
  tags: ['documents'], security: securityRequired,
  summary: 'Upload a file and attach it to a document attribute (multipart: `file`, optional `title`)',
  description:
    `The title obeys PATCH /documents' limit (${MAX_DOCUMENT_TITLE_LENGTH} characters, 400 beyond). ` +
    'Checks accepts (DOCUMENT_MIME_NOT_ACCEPTED), maxFileSize (DOCUMENT_FILE_TOO_LARGE, while streaming) and the single-file rule (DOCUMENT_MULTIPLE_NOT_ALLOWED). A refused upload leaves no bytes and no row.',
  consumes: ['multipart/form-data'],
  params: lookupParams({ objectName: "the object's name", recordId: 'the record id', attribute: "the document attribute's name" }),
  response: responses(201, documentOut),
};

export const getDocumentSchema = {
  operationId: 'getDocument',
  tags: ['documents'], security: securityRequired, summary: 'A document',
  params: documentId,
  response: responses(200, documentOut),
};

export const patchDocumentSchema = {
  operationId: 'updateDocument',
  tags: ['documents'], security: securityRequired, summary: "Change a document's title",
  params: documentId,
  body: {
    type: 'object',
    required: ['title'],
    additionalProperties: false,
    properties: { title: { type: 'string', minLength: 1, maxLength: MAX_DOCUMENT_TITLE_LENGTH } },
  },
  response: responses(200, documentOut),
};

export const deleteDocumentSchema = {
  operationId: 'deleteDocument',
  tags: ['documents'], security: securityRequired, summary: 'Delete a document (its id leaves the record value)',
  params: documentId,
  response: responses(200, deletedIdSchema),
};
