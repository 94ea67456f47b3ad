import type { Filter, SortSpec } from '../../engine/model/filter.js';
import { CliError } from '../errors.js';

/**
 * `--filter '<json>'` and `--sort attr[:asc|desc]` (repeatable, or a comma list) of
 * `records list` and `records export`, in the grammar of contract.md §3. Only the shape is
 * checked here; the server checks the names and values (one definition: engine/model/filter.ts)
 * and answers 400 naming each bad part.
 */
export function parseFilter(raw: string | undefined): Filter | undefined {
  if (raw === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    throw new CliError(`--filter is not JSON: ${(err as Error).message}`, { hint: `e.g. --filter '{"stage":{"in":["lead","qualified"]},"amount":{"gte":1000}}'` });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new CliError('--filter must be a JSON object, e.g. {"stage":"won"}');
  return parsed as Filter;
}

export function parseSort(raw: string[] | undefined): SortSpec[] | undefined {
  if (!raw || raw.length === 0) return undefined;
  const out: SortSpec[] = [];
  for (const part of raw.flatMap((r) => r.split(','))) {
    const item = part.trim();
    if (item === '') continue;
    const [attribute, direction, extra] = item.split(':');
    if (!attribute || extra !== undefined || (direction !== undefined && direction !== 'asc' && direction !== 'desc')) {
      throw new CliError(`--sort takes attr, attr:asc or attr:desc, got '${item}'`);
    }
    out.push({ attribute, direction: direction ?? 'asc' });
  }
  return out.length > 0 ? out : undefined;
}
