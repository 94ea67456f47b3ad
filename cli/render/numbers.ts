/**
 * A whole number with thousands separators, as `toLocaleString('en-US')` writes it
 * (`100,000`; `-1,234`), without it: the first `toLocaleString` of a process loads ICU's
 * locale data, ~12 ms of CPU, paid by every `records import` and `export` that prints one
 * summary line (issue 17 "Performance": the command's start is part of the import's time).
 */
export function grouped(n: number): string {
  const whole = Math.round(n);
  if (!Number.isFinite(whole)) return String(whole);
  const digits = String(Math.abs(whole));
  let out = '';
  for (let end = digits.length; end > 0; end -= 3) out = `${digits.slice(Math.max(0, end - 3), end)}${out === '' ? '' : `,${out}`}`;
  return whole < 0 || Object.is(whole, -0) ? `-${out}` : out;
}
