import { ILL_FORMED_TEXT, isWellFormed } from './stored-values.js';

/**
 * The rules for a file's name and a document's title: one definition for the upload
 * routes, PUT /files, PATCH /documents and the store. Lengths count code points, as JSON
 * Schema's maxLength does (the route schemas use these same numbers), so a name of
 * emoji is measured as a person counts it and a cut never splits a surrogate pair.
 *
 * A name the client sends with the file (upload) is metadata the client did not type for
 * us: it is cleaned (last path segment, bad characters out, cut to fit). A name or title
 * sent on purpose (rename, PATCH, an upload's `title` field) is refused when it breaks a
 * rule, so what is stored is what was sent.
 */
export const MAX_FILE_NAME_LENGTH = 255;
export const MAX_DOCUMENT_TITLE_LENGTH = 500;

/**
 * C0 and C1 controls, DEL, the bidirectional embeddings, overrides and isolates (U+202A–
 * U+202E, U+2066–U+2069: "invoice\u202Efdp.exe" displays as "invoiceexe.pdf", a known
 * way to disguise a file's real extension). Unpaired surrogates follow the rule for every
 * stored string (stored-values.ts).
 */
// eslint-disable-next-line no-control-regex
const BAD_CHARACTER = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/u;
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/gu;

/** A tail after the last dot longer than this is part of the name, not an extension. */
const MAX_EXTENSION_LENGTH = 16;

function codePoints(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/**
 * An uploaded file's name as stored: the last path segment the client sent, control
 * characters dropped, unpaired surrogates replaced by U+FFFD (a name we clean, not one
 * typed for us: stored-values.ts refuses those), cut to MAX_FILE_NAME_LENGTH
 * keeping the extension. It is shown and used for downloads, never joined to a path.
 */
export function cleanFileName(name: string | undefined): string {
  const base = (name ?? '').split(/[\\/]/).pop()!.replace(CONTROL_CHARACTERS, '').toWellFormed().trim();
  // Trimmed again after the cut, which can end on a space: a stored name is one PUT /files takes.
  const cut = cutToLength(base, MAX_FILE_NAME_LENGTH).trim();
  return cut === '' || cut === '.' || cut === '..' ? 'file' : cut;
}

/** At most `max` code points, cut between code points, the extension kept when there is one. */
function cutToLength(name: string, max: number): string {
  if (codePoints(name) <= max) return name;
  const dot = name.lastIndexOf('.');
  const ext = dot > 0 ? name.slice(dot) : '';
  const keep = ext !== '' && codePoints(ext) <= MAX_EXTENSION_LENGTH ? ext : '';
  return Array.from(name.slice(0, name.length - keep.length)).slice(0, max - codePoints(keep)).join('') + keep;
}

/**
 * Why a name sent to PUT /files cannot be stored as sent, or null: whatever an upload's
 * name would lose to cleanFileName is refused here, so a name that passes is stored as is.
 */
export function fileNameProblem(name: string): string | null {
  if (!isWellFormed(name)) return `name ${ILL_FORMED_TEXT}`;
  if (BAD_CHARACTER.test(name)) return 'name must not contain control characters or bidirectional overrides';
  if (/[\\/]/.test(name)) return 'name must be a file name, without / or \\';
  if (name.trim() !== name) return 'name must not begin or end with whitespace';
  if (name === '' || name === '.' || name === '..') return 'name must not be empty, "." or ".."';
  if (codePoints(name) > MAX_FILE_NAME_LENGTH) return `name must be at most ${MAX_FILE_NAME_LENGTH} characters`;
  return null;
}

/** Why a document title (PATCH /documents or an upload's `title` field) cannot be stored, or null. */
export function titleProblem(title: string): string | null {
  if (!isWellFormed(title)) return `title ${ILL_FORMED_TEXT}`;
  if (codePoints(title) > MAX_DOCUMENT_TITLE_LENGTH) return `title must be at most ${MAX_DOCUMENT_TITLE_LENGTH} characters`;
  return null;
}
