import type pg from 'pg';

/**
 * Named prepared statements for the writes that run most often (issue 15 "Performance").
 * node-postgres sends an unnamed statement's text with every call, and PostgreSQL parses and
 * plans it every time; a named one is parsed and planned once per connection, and later calls
 * send only its parameters. For the single-record create (one INSERT … SELECT … WHERE token)
 * that was most of the database's work: 210 µs of PostgreSQL CPU per create unnamed, 120 µs
 * named (10 connections inserting at once, the index trigger on; test/bench/postgres.bench.mjs).
 *
 * Which statements: INSERT, UPDATE and DELETE without RETURNING, shorter than MAX_TEXT. A
 * statement that returns no rows cannot meet "cached plan must not change result type" when a
 * push changes its table: PostgreSQL plans it again from its text (a dropped column then fails
 * it as it would fail unnamed). Long texts (a bulk write's multi-row INSERT) stay unnamed: a
 * plan of thousands of parameters held by every connection costs more memory than its
 * parse saves.
 *
 * A name is never given to two texts (node-postgres refuses a name prepared on a connection
 * with other text), so the map only grows, up to MAX_NAMES; texts past it run unnamed. Texts
 * vary with the schema (an object's columns), not with the values, so it is the number of
 * objects and pushes that fills it. Behind a connection pooler in transaction mode, prepared
 * statements need its support (PgBouncer 1.21+, `max_prepared_statements`).
 */
const MAX_NAMES = 2000;
const MAX_TEXT = 4000;
const ELIGIBLE = /^\s*(?:INSERT|UPDATE|DELETE)\b/i;

export class PreparedNames {
  private readonly names = new Map<string, string>();

  /** The query to send for `text` (placeholders already numbered) with `values`. */
  query(text: string, values: readonly unknown[]): pg.QueryConfig {
    const name = this.nameOf(text);
    return name === undefined ? { text, values: values as unknown[] } : { name, text, values: values as unknown[] };
  }

  private nameOf(text: string): string | undefined {
    const known = this.names.get(text);
    if (known !== undefined) return known;
    if (this.names.size >= MAX_NAMES || text.length > MAX_TEXT || !ELIGIBLE.test(text) || /\bRETURNING\b/i.test(text) || text.includes(';')) return undefined;
    const name = `ss_${this.names.size + 1}`;
    this.names.set(text, name);
    return name;
  }
}
