import { api } from './api.js';
import type { ObjectInfo } from './types.js';

/**
 * The objects, read once per sign-in and on demand: the records table, forms and filters
 * are generated from their attribute types, so every page asks here first.
 */
let cached: Promise<ObjectInfo[]> | null = null;

export function objects(): Promise<ObjectInfo[]> {
  cached ??= api<ObjectInfo[]>('GET', '/schema/objects').then((a) => a.data);
  cached.catch(() => (cached = null));
  return cached;
}

export async function objectNamed(name: string): Promise<ObjectInfo | undefined> {
  return (await objects()).find((o) => o.name === name);
}

export function forgetSchema(): void {
  cached = null;
}
