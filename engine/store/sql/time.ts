export const now = (): string => new Date().toISOString();

/**
 * A source's appliedAt for a write that keeps its version (a push with no steps whose
 * declaration still changed): strictly after the one stored. Every store validates its parsed
 * copy of a source by (version, appliedAt) (sources-cache.ts), so two such writes within
 * one millisecond would otherwise leave another connection holding the older declaration as
 * current.
 */
export function nowAfter(previous: string | null): string {
  const t = Date.now();
  const p = previous === null ? Number.NaN : Date.parse(previous);
  return new Date(Number.isFinite(p) && p >= t ? p + 1 : t).toISOString();
}
