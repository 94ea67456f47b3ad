import { closest } from '../../engine/declaration/suggest.js';
import type { AttributeSpec } from '../../engine/model/attribute.js';
import { SYSTEM_ATTRIBUTES, SYSTEM_RECORD_FIELDS } from '../../engine/model/names.js';
import type { StoredObject } from '../../engine/model/stored.js';
import { cellFromValue, valueFromCell } from '../../engine/model/types/cells.js';
import { parseValue } from '../../engine/model/types/registry.js';

/**
 * One problem of one row: the attribute it concerns and, in a CSV file, its column (1-based),
 * when it concerns one. The message names the attribute itself (`amount must be a number`).
 */
export interface RowError {
  attribute?: string;
  column?: number;
  message: string;
}

/** A clean row's problems: none, one frozen array for every such row. */
const NO_ERRORS: readonly RowError[] = Object.freeze([]);

/** The system attributes, and the record's own camelCase fields a full record carries. */
const SYSTEM_NAMES: ReadonlySet<string> = new Set([...SYSTEM_ATTRIBUTES, ...SYSTEM_RECORD_FIELDS]);

/**
 * An object's attributes as the records commands need them, read once per command from
 * GET /schema/objects/:name (issue 17: "fetch the object's schema once"). The value rules
 * are the registry's (engine/model/types) — the same parseValue the server runs — so what
 * this refuses the server would refuse too. What needs the stored data (relation and
 * document ids exist, unique against stored records) is left to the server.
 */
export class RecordShape {
  readonly name: string;
  /** User attributes in schema order (system ones excluded). */
  readonly attributes: readonly AttributeSpec[];
  private readonly byName: Map<string, AttributeSpec>;

  constructor(object: StoredObject) {
    this.name = object.name;
    this.attributes = object.attributes.filter((a) => !a.system);
    this.byName = new Map(this.attributes.map((a) => [a.name, a]));
  }

  get(name: string): AttributeSpec | undefined {
    return this.byName.get(name);
  }

  /** id, version, created_at …: the service assigns them, so a file's values for them are ignored. */
  isSystem(name: string): boolean {
    return SYSTEM_NAMES.has(name);
  }

  /** `object deal has no attribute "amout" (did you mean "amount"?)`. */
  unknown(name: string): string {
    const near = closest(name, this.byName.keys());
    return `object ${this.name} has no attribute ${JSON.stringify(name)}${near ? ` (did you mean "${near}"?)` : ''}`;
  }

  /**
   * Check a create body as the server's parseRecordBody would: every attribute sent is
   * parsed by its type, and on create a missing one falls back to its default and then to
   * `required`. Every problem is returned, not the first.
   */
  check(values: Record<string, unknown>, mode: 'create' | 'update'): RowError[] {
    const errors: RowError[] = [];
    for (const key of Object.keys(values)) {
      if (!this.byName.has(key)) errors.push({ attribute: key, message: this.unknown(key) });
    }
    errors.push(...this.checkValues(values, mode));
    return errors;
  }

  /**
   * check() of values whose every key is an attribute (the caller has just looked each one
   * up): the import's hot path. A clean row gets one shared, frozen empty array, not its own.
   */
  checkValues(values: Record<string, unknown>, mode: 'create' | 'update'): readonly RowError[] {
    let errors: RowError[] | undefined;
    for (const spec of this.attributes) {
      const sent = Object.hasOwn(values, spec.name);
      if (!sent && mode === 'update') continue;
      const parsed = parseValue(spec, sent ? values[spec.name] : spec.default);
      if (!parsed.ok) (errors ??= []).push({ attribute: spec.name, message: `${spec.name} ${parsed.message}` });
    }
    return errors ?? NO_ERRORS;
  }

  /** `attr=value` or a CSV cell → the API value, typed by the attribute. */
  fromCell(name: string, cell: string | null): { ok: true; value: unknown } | { ok: false; message: string } {
    const spec = this.byName.get(name);
    if (!spec) return { ok: false, message: this.unknown(name) };
    const v = valueFromCell(spec, cell);
    return v.ok ? v : { ok: false, message: `${name} ${v.message}` };
  }

  toCell(name: string, value: unknown): string | null {
    const spec = this.byName.get(name);
    return spec ? cellFromValue(spec, value) : value === null || value === undefined ? null : String(value);
  }
}
