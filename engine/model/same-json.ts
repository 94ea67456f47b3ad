/**
 * Whether two JSON-shaped values are the same value, key order included: when this says
 * yes, JSON.stringify gives the same text for both. It says no on anything it cannot vouch
 * for (a key present on one side only, NaN, non-plain objects), so a caller that needs the exact JSON.stringify
 * verdict falls back to it then. Early exit on the first difference, no string built: a
 * 1.5 MB declaration compares in a few ms where two stringify calls took ~12 ms (issue 4).
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true; // one value (or one object) stringifies to one text
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b) || !isPlain(a) || !isPlain(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    const k = ka[i]!;
    if (k !== kb[i] || !sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  }
  return true;
}

function isPlain(o: object): boolean {
  const proto = Object.getPrototypeOf(o) as unknown;
  return proto === Object.prototype || proto === null;
}
