/**
 * Byte sizes in declarations: a number of bytes or `512KB`, `10MB`, `1GB` (contract.md §2).
 * Binary multiples, as upload limits conventionally are.
 */
const UNITS: Record<string, number> = { B: 1, KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3 };

export const SIZE_PATTERN_SOURCE = '^\\s*\\d+(\\.\\d+)?\\s*(B|KB|MB|GB)\\s*$';
const SIZE_PATTERN = /^\s*(\d+(?:\.\d+)?)\s*(B|KB|MB|GB)\s*$/i;

/** Bytes for a size, or null when it is not one. */
export function parseSize(value: unknown): number | null {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value > 0 ? value : null;
  if (typeof value !== 'string') return null;
  const m = SIZE_PATTERN.exec(value);
  if (!m) return null;
  const bytes = Math.round(Number(m[1]) * (UNITS[m[2]!.toUpperCase()] ?? NaN));
  return Number.isSafeInteger(bytes) && bytes > 0 ? bytes : null;
}

/** The shortest exact unit form (`10MB`), or plain bytes; what `pull` writes back. */
export function formatSize(bytes: number): string | number {
  for (const unit of ['GB', 'MB', 'KB'] as const) {
    const n = UNITS[unit]!;
    if (bytes >= n && bytes % n === 0) return `${bytes / n}${unit}`;
  }
  return bytes;
}
