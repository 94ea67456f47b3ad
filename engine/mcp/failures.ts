import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ServiceAuthError, ServiceRequestError } from '../sdk/index.js';
import { errorResult } from './format.js';

/**
 * A failed call as the tool's result (contract.md §6; service-interface.md "How each
 * client surfaces an error": "Inside a call the result carries isError: true and text
 * content saying access is denied"). 401 and 403 (the SDK's ServiceAuthError) read
 * `Access denied: cannot <action> <object>`; every other refusal keeps the API's own status,
 * code, message and field messages — a stale version's 409 included — so the model
 * learns what the HTTP API would have said, plus what to do next where that is known.
 */
const NEXT: Readonly<Record<string, string>> = {
  SCHEMA_CONFLICT: 'Someone changed the record since you read it: read it again (get_record) and retry with its current version.',
  ROUTE_NOT_FOUND: 'This instance does not serve that route yet.',
  SCHEMA_OBJECT_NOT_FOUND: 'See list_objects for the objects that exist.',
  SCHEMA_ATTRIBUTE_NOT_FOUND: 'See describe_object for the attributes of the object.',
};

/** A failure the tool itself words (a declaration with errors): its message is the result. */
export class ToolFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolFailure';
  }
}

export function failureResult(err: unknown, refused: string): CallToolResult {
  if (err instanceof ServiceAuthError) {
    const why = err.status === 401 ? ' The API key is invalid or has been revoked.' : '';
    return errorResult(`Access denied: cannot ${refused}.${why}`);
  }
  if (err instanceof ToolFailure) return errorResult(err.message);
  if (err instanceof ServiceRequestError) {
    if (err.status === 0) return errorResult(err.message);
    const lines = [`Error: ${err.status}${err.code ? ` ${err.code}` : ''}: ${err.message}`];
    for (const d of err.details ?? []) lines.push(`  ${d.path.length > 0 ? d.path.join('.') : '(body)'}: ${d.message}`);
    const next = err.code ? NEXT[err.code] : undefined;
    if (next) lines.push(next);
    return errorResult(lines.join('\n'));
  }
  throw err;
}
