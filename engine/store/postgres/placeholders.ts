/**
 * The store's shared SQL binds with `?` (engine/store/port.ts); PostgreSQL numbers its
 * parameters (`$1`, `$2`, …). The rewrite skips what is not a placeholder: string literals
 * ('…', with '' inside, and E'…' with backslash escapes), quoted identifiers ("…"), dollar-
 * quoted bodies ($tag$…$tag$), and comments (-- and /* *\/). The shared SQL never uses
 * PostgreSQL's jsonb `?` operators (dialect.ts spells containment `@>`), so every other `?`
 * is a parameter.
 */
export function numberPlaceholders(sql: string): string {
  let out = '';
  let n = 0;
  let i = 0;
  const len = sql.length;
  while (i < len) {
    const c = sql[i]!;
    if (c === '?') {
      out += `$${++n}`;
      i++;
    } else if (c === "'") {
      const escapes = i > 0 && /[eE]/.test(sql[i - 1]!) && (i < 2 || !/\w/.test(sql[i - 2]!));
      const end = skipQuoted(sql, i, "'", escapes);
      out += sql.slice(i, end);
      i = end;
    } else if (c === '"') {
      const end = skipQuoted(sql, i, '"', false);
      out += sql.slice(i, end);
      i = end;
    } else if (c === '-' && sql[i + 1] === '-') {
      const nl = sql.indexOf('\n', i);
      const end = nl === -1 ? len : nl;
      out += sql.slice(i, end);
      i = end;
    } else if (c === '/' && sql[i + 1] === '*') {
      const close = sql.indexOf('*/', i + 2);
      const end = close === -1 ? len : close + 2;
      out += sql.slice(i, end);
      i = end;
    } else if (c === '$' && (i === 0 || !/[\w$]/.test(sql[i - 1]!))) {
      const tag = /^\$([A-Za-z_][A-Za-z_0-9]*)?\$/.exec(sql.slice(i));
      if (tag) {
        const close = sql.indexOf(tag[0], i + tag[0].length);
        const end = close === -1 ? len : close + tag[0].length;
        out += sql.slice(i, end);
        i = end;
      } else {
        out += c;
        i++;
      }
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** The index just past the literal opened at `start` by `quote` (doubled quote = one). */
function skipQuoted(sql: string, start: number, quote: string, backslash: boolean): number {
  let i = start + 1;
  while (i < sql.length) {
    const c = sql[i]!;
    if (backslash && c === '\\') i += 2;
    else if (c === quote) {
      if (sql[i + 1] === quote) i += 2;
      else return i + 1;
    } else i++;
  }
  return sql.length;
}

/** SQL texts vary with filter shapes; a bounded cache keeps the common ones (LRU). */
export class PlaceholderCache {
  private readonly map = new Map<string, string>();
  constructor(private readonly size = 500) {}

  get(sql: string): string {
    let out = this.map.get(sql);
    if (out !== undefined) {
      this.map.delete(sql);
      this.map.set(sql, out);
      return out;
    }
    out = sql.includes('?') ? numberPlaceholders(sql) : sql;
    this.map.set(sql, out);
    if (this.map.size > this.size) this.map.delete(this.map.keys().next().value!);
    return out;
  }
}
