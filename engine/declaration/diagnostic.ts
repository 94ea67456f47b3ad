import type { ErrorCode } from '../errors.js';

/**
 * One problem found in a declaration (issue 2: every error says what is wrong in words,
 * carries the spec code where one applies, and suggests the near miss). Paths point into
 * the declaration (`["objects", "deal", "attributes", "amount", "type"]`) so the same
 * diagnostics serve a YAML file (located by load.ts) and an HTTP body (routes).
 */
export interface Diagnostic {
  severity: 'error' | 'warning';
  code?: ErrorCode;
  message: string;
  path: (string | number)[];
  /** The near miss, bare (`integer`); renderers add "did you mean". */
  suggestion?: string;
  /** What the user can do about it, when the message alone does not say. */
  fix?: string;
  /** Point at the mapping key rather than its value (a bad name, an unknown field). */
  on?: 'key';
}

export interface ValidationResult<T> {
  /** Present only when there are no errors. */
  value?: T;
  diagnostics: Diagnostic[];
}

export type Path = (string | number)[];

export const hasErrors = (diagnostics: readonly Diagnostic[]): boolean =>
  diagnostics.some((d) => d.severity === 'error');

/**
 * The thing a path points at, in words: `attribute "amount" of object "deal"`. Messages
 * start from this so they read well without a file (the HTTP route shows them bare).
 */
export function describePath(path: Path): string {
  const [top, name, sub, attr] = path;
  if (top === 'objects' && typeof name === 'string') {
    if (sub === 'attributes' && typeof attr === 'string') return `attribute "${attr}" of object "${name}"`;
    return `object "${name}"`;
  }
  if (top === 'views' && typeof name === 'string') return `view "${name}"`;
  if (top === 'roles' && typeof name === 'string') return `role "${name}"`;
  if (top === 'attribute' && typeof name === 'string') return `attribute "${name}"`;
  return 'the declaration';
}

export const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
