import type { AttributeSpec } from '../model/attribute.js';
import { SYSTEM_FILTER_FIELDS, systemFilterSpec, FILTER_OPS, checkFilter, checkSort, type FilterOp, type Scalar } from '../model/filter.js';
import { filterOperand, operandSpec } from '../model/filter-operand.js';
import { attributeNameProblem, isValidName, malformedName, objectNameProblem } from '../model/names.js';
import { renamedFromStillDeclared } from '../model/renames.js';
import { parseSize } from '../model/sizes.js';
import { isAttributeType, parseValue, typeDef } from '../model/types/registry.js';
import { isPlainObject, type Diagnostic, type Path } from './diagnostic.js';
import { add, reported, subject, unreadableNote, type RuleContext } from './rule-context.js';
import { checkRoles } from './role-rules.js';
import { closest, suggestName } from './suggest.js';

/**
 * The rules a JSON Schema cannot say (issue 2 "Semantic rules beyond the JSON Schema"),
 * each with the spec's code where one exists. They run on whatever is structurally
 * usable, after the schema, so one run reports everything; `skip` holds the paths the
 * schema already reported so nothing is said twice.
 */
export function checkDeclarationRules(raw: Record<string, unknown>, ctx: RuleContext): void {
  const objects = isPlainObject(raw['objects']) ? raw['objects'] : {};
  const views = isPlainObject(raw['views']) ? raw['views'] : {};
  const objectNames = new Set(Object.keys(objects));

  for (const [name, obj] of Object.entries(objects)) {
    const path = ['objects', name];
    const problem = objectNameProblem(name);
    if (problem) {
      const suggestion = problem.code === 'SCHEMA_INVALID_OBJECT_NAME' ? suggestName(name) : undefined;
      add(ctx, { severity: 'error', code: problem.code, message: problem.message, path, on: 'key', ...(suggestion ? { suggestion } : {}) });
    }
    if (!isPlainObject(obj)) continue;
    const renamedFrom = obj['renamedFrom'];
    if (typeof renamedFrom === 'string') {
      const p = [...path, 'renamedFrom'];
      const bad = objectNameProblem(renamedFrom);
      if (bad) add(ctx, { severity: 'error', code: bad.code, message: `${subject(ctx, path)}: renamedFrom: ${bad.message}`, path: p });
      else if (renamedFromStillDeclared(name, renamedFrom, (n) => objectNames.has(n))) {
        add(ctx, {
          severity: 'error',
          code: 'SCHEMA_VALIDATION_FAILED',
          message: `${subject(ctx, path)} is renamed from "${renamedFrom}", which is still declared`,
          path: p,
          fix: `Remove the object "${renamedFrom}" or the renamedFrom.`,
        });
      }
    }
    const attributes = isPlainObject(obj['attributes']) ? obj['attributes'] : {};
    checkAttributes(attributes, [...path, 'attributes'], ctx, objectNames);
  }

  for (const [name, view] of Object.entries(views)) {
    const path = ['views', name];
    if (!isValidName(name)) {
      const suggestion = suggestName(name);
      add(ctx, {
        severity: 'error',
        code: 'SCHEMA_VALIDATION_FAILED',
        message: malformedName('View', name),
        path,
        on: 'key',
        ...(suggestion ? { suggestion } : {}),
      });
    }
    if (isPlainObject(view)) checkView(view, path, ctx, objects);
  }

  if (isPlainObject(raw['roles'])) checkRoles(raw['roles'], ctx, objects);
}

/** The attributes of one object (or the one attribute of an AddAttributeInput). */
export function checkAttributes(
  attributes: Record<string, unknown>,
  base: Path,
  ctx: RuleContext,
  objectNames: ReadonlySet<string> | undefined,
): void {
  const names = new Set(Object.keys(attributes));
  const renamedFrom = new Map<string, string>();
  for (const [name, attr] of Object.entries(attributes)) {
    const path = [...base, name];
    const problem = attributeNameProblem(name);
    if (problem) {
      const suggestion = isValidName(name) ? undefined : suggestName(name);
      add(ctx, { severity: 'error', code: problem.code, message: problem.message, path, on: 'key', ...(suggestion ? { suggestion } : {}) });
    }
    if (!isPlainObject(attr)) continue;
    const from = attr['renamedFrom'];
    if (typeof from === 'string') {
      const p = [...path, 'renamedFrom'];
      const bad = attributeNameProblem(from);
      if (bad) add(ctx, { severity: 'error', code: bad.code, message: `${subject(ctx, path)}: renamedFrom: ${bad.message}`, path: p });
      else if (renamedFromStillDeclared(name, from, (n) => names.has(n))) {
        add(ctx, {
          severity: 'error',
          code: 'SCHEMA_VALIDATION_FAILED',
          message: `${subject(ctx, path)} is renamed from "${from}", which is still declared`,
          path: p,
          fix: `Remove the attribute "${from}" or the renamedFrom.`,
        });
      } else if (renamedFrom.has(from)) {
        add(ctx, {
          severity: 'error',
          code: 'SCHEMA_VALIDATION_FAILED',
          message: `${subject(ctx, path)} and attribute "${renamedFrom.get(from)}" are both renamed from "${from}"`,
          path: p,
        });
      } else renamedFrom.set(from, name);
    }
    checkAttribute(attr, path, ctx, objectNames);
  }
}

function checkAttribute(attr: Record<string, unknown>, path: Path, ctx: RuleContext, objectNames: ReadonlySet<string> | undefined): void {
  const type = attr['type'];
  if (!isAttributeType(type)) return; // the schema reported it, with the near miss
  const def = typeDef(type);
  // Built only when something is wrong: this runs for every attribute of every object.
  const who = (): string => subject(ctx, path);
  const num = (k: string): number | undefined => (typeof attr[k] === 'number' ? (attr[k] as number) : undefined);

  if (attr['unique'] === true && !def.uniqueAllowed) {
    add(ctx, {
      severity: 'error',
      code: 'SCHEMA_VALIDATION_FAILED',
      message: `${who()}: "unique" is not available for ${type} attributes`,
      path: [...path, 'unique'],
      on: 'key',
    });
  }
  const [min, max] = [num('min'), num('max')];
  if (min !== undefined && max !== undefined && min > max) {
    add(ctx, { severity: 'error', code: 'SCHEMA_VALIDATION_FAILED', message: `${who()}: "min" (${min}) is greater than "max" (${max})`, path: [...path, 'max'] });
  }
  if (def.wholeBounds) {
    for (const k of ['min', 'max']) {
      const v = num(k);
      if (v !== undefined && !Number.isInteger(v)) {
        add(ctx, { severity: 'error', code: 'SCHEMA_VALIDATION_FAILED', message: `${who()}: "${k}" of an integer attribute must be a whole number (got ${v})`, path: [...path, k] });
      }
    }
  }
  const [minLength, maxLength] = [num('minLength'), num('maxLength')];
  if (minLength !== undefined && maxLength !== undefined && minLength > maxLength) {
    add(ctx, {
      severity: 'error',
      code: 'SCHEMA_VALIDATION_FAILED',
      message: `${who()}: "minLength" (${minLength}) is greater than "maxLength" (${maxLength})`,
      path: [...path, 'maxLength'],
    });
  }
  const pattern = attr['pattern'];
  if (typeof pattern === 'string') {
    try {
      new RegExp(pattern, 'u');
    } catch (err) {
      add(ctx, {
        severity: 'error',
        code: 'SCHEMA_VALIDATION_FAILED',
        message: `${who()}: "pattern" is not a valid regular expression (${(err as Error).message.replace(/^Invalid regular expression: /, '')})`,
        path: [...path, 'pattern'],
      });
    }
  }
  let maxFileSize: number | undefined;
  if (attr['maxFileSize'] !== undefined) {
    const bytes = parseSize(attr['maxFileSize']);
    if (bytes === null) {
      add(ctx, {
        severity: 'error',
        code: 'SCHEMA_VALIDATION_FAILED',
        message: `${who()}: "maxFileSize" must be a number of bytes or a size such as 512KB, 10MB or 1GB (got ${JSON.stringify(attr['maxFileSize'])})`,
        path: [...path, 'maxFileSize'],
      });
    } else maxFileSize = bytes;
  }
  const target = attr['target'];
  if (def.reference === 'record' && typeof target === 'string') {
    const p = [...path, 'target'];
    const bad = objectNameProblem(target);
    if (bad && bad.code === 'SCHEMA_INVALID_OBJECT_NAME') {
      add(ctx, { severity: 'error', code: 'SCHEMA_VALIDATION_FAILED', message: `${who()}: target "${target}" is not a valid object name`, path: p });
    } else if (objectNames && !objectNames.has(target)) {
      const suggestion = closest(target, objectNames);
      add(ctx, {
        severity: 'warning',
        message: `${who()} points to object "${target}", which these files do not declare${unreadableNote(ctx)}: it must exist on the instance (plan checks it)`,
        path: p,
        ...(suggestion ? { suggestion } : {}),
      });
    }
  }
  if (attr['default'] !== undefined && attr['default'] !== null) {
    const p = [...path, 'default'];
    if (def.reference !== undefined) {
      add(ctx, {
        severity: 'error',
        code: 'SCHEMA_VALIDATION_FAILED',
        message: `${who()}: a ${type} attribute cannot have a default (record and document ids are not known in a declaration)`,
        path: p,
      });
    } else if (!reported(ctx, [...path, 'options']) && !reported(ctx, [...path, 'pattern'])) {
      // The one value validator (registry parseValue) decides, so a default fits exactly
      // what a record write would accept.
      const spec = { ...attr, name: String(path[path.length - 1]), required: false } as unknown as AttributeSpec;
      if (maxFileSize !== undefined) spec.maxFileSize = maxFileSize;
      const parsed = parseValue(spec, attr['default']);
      if (!parsed.ok) {
        const suggestion = optionSuggestion(attr['options'], attr['default']);
        add(ctx, {
          severity: 'error',
          code: 'SCHEMA_VALIDATION_FAILED',
          message: `${who()}: default ${JSON.stringify(attr['default'])} ${parsed.message}`,
          path: parsed.at ? [...p, ...parsed.at] : p,
          ...(suggestion ? { suggestion } : {}),
        });
      }
    }
  }
}

/** For a select/multiselect default outside its options: the option it was meant to be. */
function optionSuggestion(options: unknown, value: unknown): string | undefined {
  if (!Array.isArray(options)) return undefined;
  const names = options.filter((o): o is string => typeof o === 'string');
  const miss = typeof value === 'string' ? value : Array.isArray(value) ? value.find((v) => typeof v === 'string' && !names.includes(v)) : undefined;
  return typeof miss === 'string' && names.length ? closest(miss, names) : undefined;
}

function checkView(view: Record<string, unknown>, path: Path, ctx: RuleContext, objects: Record<string, unknown>): void {
  const objectName = view['object'];
  if (typeof objectName !== 'string') return;
  const who = subject(ctx, path);
  const obj = objects[objectName];
  if (!isPlainObject(obj)) {
    const suggestion = closest(objectName, Object.keys(objects));
    // With a file unread the object may well be declared there: a warning, not a second
    // false error on top of the syntax error that is the real problem.
    const unsure = unreadableNote(ctx);
    add(ctx, {
      ...(unsure ? { severity: 'warning' as const } : { severity: 'error' as const, code: 'SCHEMA_VALIDATION_FAILED' as const }),
      message: `${who} lists object "${objectName}", which ${unsure ? 'the files that could be read do not declare' : 'is not declared'}${unsure}`,
      path: [...path, 'object'],
      ...(suggestion ? { suggestion } : {}),
    });
    return;
  }
  const declared = isPlainObject(obj['attributes']) ? Object.keys(obj['attributes']) : [];
  const known = new Set<string>([...declared, ...SYSTEM_FILTER_FIELDS]);
  const isKnown = (n: string): boolean => known.has(n);
  const unknownAttribute = (p: Path, message: string): Diagnostic => {
    const m = /^unknown attribute "(.*)"$/.exec(message);
    const op = /^unknown operator "(.*)"/.exec(message);
    const suggestion = m ? closest(m[1]!, known) : op ? closest(op[1]!, FILTER_OPS) : undefined;
    return {
      severity: 'error',
      code: 'SCHEMA_VALIDATION_FAILED',
      message: m ? `${who}: object "${objectName}" has no attribute "${m[1]}"` : `${who}: ${p.slice(2).join('.')} ${message}`,
      path: p,
      ...(m || op ? { on: 'key' as const } : {}),
      ...(suggestion ? { suggestion } : {}),
    };
  };
  const columns = view['columns'];
  if (Array.isArray(columns)) {
    columns.forEach((c, i) => {
      if (typeof c === 'string' && !isKnown(c)) {
        const d = unknownAttribute([...path, 'columns', i], `unknown attribute "${c}"`);
        delete d.on;
        add(ctx, d);
      }
    });
  }
  if (view['filter'] !== undefined) {
    const problems = checkFilter(view['filter'], isKnown, [...path, 'filter']);
    for (const e of problems) add(ctx, unknownAttribute(e.path, e.message));
    if (problems.length === 0 && isPlainObject(obj['attributes'])) {
      checkFilterValues(view['filter'], obj['attributes'], [...path, 'filter'], (p, message, suggestion) =>
        add(ctx, { severity: 'error', code: 'SCHEMA_VALIDATION_FAILED', message: `${who}: ${message}`, path: p, ...(suggestion ? { suggestion } : {}) }),
      );
    }
  }
  if (view['sort'] !== undefined) {
    for (const e of checkSort(view['sort'], isKnown, [...path, 'sort'])) {
      const d = unknownAttribute(e.path, e.message);
      delete d.on;
      add(ctx, d);
    }
  }
}

/**
 * A view's filter compares with values the attribute can hold, by the same rule record
 * search applies (engine/model/filter-operand.ts): `stage: { in: [lead, wonn] }` names an
 * option that does not exist, which would silently match nothing.
 */
function checkFilterValues(
  filter: unknown,
  attributes: Record<string, unknown>,
  base: Path,
  report: (path: Path, message: string, suggestion?: string) => void,
): void {
  if (!isPlainObject(filter)) return;
  for (const [key, value] of Object.entries(filter)) {
    if ((key === 'and' || key === 'or') && Array.isArray(value)) {
      value.forEach((f, i) => checkFilterValues(f, attributes, [...base, key, i], report));
      continue;
    }
    if (key === 'not') {
      checkFilterValues(value, attributes, [...base, key], report);
      continue;
    }
    // System fields (created_at, version, …) compare by their own type, as in search.
    const attr = Object.hasOwn(attributes, key) ? attributes[key] : systemFilterSpec(key);
    if (!isPlainObject(attr) || !isAttributeType(attr['type'])) continue;
    // The attribute's own checks report a malformed options list; here it counts as none.
    const options = Array.isArray(attr['options']) ? (attr['options'] as unknown[]).map(String) : [];
    const spec = operandSpec({ ...attr, name: key, options } as unknown as AttributeSpec);
    const check = (op: FilterOp, v: Scalar, p: Path): void => {
      const operand = filterOperand(spec, op, v);
      if (operand.ok) return;
      const suggestion = typeof v === 'string' && options.length ? closest(v, options) : undefined;
      report(p, operand.message, suggestion);
    };
    if (!isPlainObject(value)) {
      check('eq', value as Scalar, [...base, key]);
      continue;
    }
    for (const [op, v] of Object.entries(value)) {
      if (op === 'isNull') continue;
      if (Array.isArray(v)) v.forEach((x, i) => x !== null && check(op as FilterOp, x as Scalar, [...base, key, op, i]));
      else check(op as FilterOp, v as Scalar, [...base, key, op]);
    }
  }
}
