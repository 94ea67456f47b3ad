import { CliError } from './errors.js';

/** `--limit`: a whole number in 1..max (the server's own bound, so a bad value fails before any request). */
export function limitOf(raw: string | undefined, max: number): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > max) throw new CliError(`--limit must be a whole number from 1 to ${max}, got '${raw}'`);
  return n;
}
