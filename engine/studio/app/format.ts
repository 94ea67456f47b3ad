import type { Child } from './dom.js';
import { h } from './dom.js';
import type { Attribute } from './types.js';

/** A value as one line of text for a table cell (never markup: the caller appends it as text). */
export function formatValue(value: unknown, attribute?: Attribute): string {
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) return value.map((v) => formatValue(v)).join(', ');
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'object') return JSON.stringify(value);
  if (attribute?.type === 'datetime' && typeof value === 'string') return formatTime(value);
  return String(value);
}

/** An ISO instant as `2026-11-24 03:15 UTC`: readable, and the same on every machine. */
export const formatTime = (iso: string | null | undefined): string => (iso ? iso.replace('T', ' ').replace(/(:\d\d)(\.\d+)?Z$/, '$1 UTC') : '');

export function formatBytes(n: number): string {
  if (n >= 1024 * 1024) return `${Math.round((n / 1024 / 1024) * 10) / 10} MB`;
  if (n >= 1024) return `${Math.round((n / 1024) * 10) / 10} KB`;
  return `${n} B`;
}

/**
 * A search snippet with its matches marked, from the `highlights` offsets (contract.md §3):
 * slices of the plain-text snippet as text nodes inside <mark>. Offsets out of range or
 * overlapping are clamped, so a bad answer cannot break the page or inject anything.
 */
export function highlighted(snippet: string, highlights: readonly (readonly [number, number])[]): Child[] {
  const parts: Child[] = [];
  let at = 0;
  const sorted = [...highlights].filter((r) => Array.isArray(r) && r.length === 2).sort((a, b) => a[0] - b[0]);
  for (const [rawStart, rawEnd] of sorted) {
    const start = Math.max(at, Math.min(snippet.length, Math.trunc(rawStart)));
    const end = Math.max(start, Math.min(snippet.length, Math.trunc(rawEnd)));
    if (end === start) continue;
    if (start > at) parts.push(snippet.slice(at, start));
    parts.push(h('mark', null, snippet.slice(start, end)));
    at = end;
  }
  if (at < snippet.length) parts.push(snippet.slice(at));
  return parts;
}

export const labelOf = (a: { name: string; label?: string }): string => a.label ?? a.name;
