import type { AttributeSpec } from '../model/attribute.js';
import type { Declaration, ObjectDecl } from '../model/declaration.js';
import { objectNameProblem } from '../model/names.js';
import { parseSize } from '../model/sizes.js';
import { describeProblem, storedValueProblems } from '../model/stored-values.js';
import { runSchema } from './ajv.js';
import { translateAjvErrors } from './ajv-messages.js';
import { describePath, hasErrors, isPlainObject, type Diagnostic, type Path, type ValidationResult } from './diagnostic.js';
import type { RuleContext } from './rule-context.js';
import { checkAttributes, checkDeclarationRules } from './rules.js';
import { suggestName } from './suggest.js';

export type { Diagnostic, ValidationResult } from './diagnostic.js';

/**
 * Validate a declaration (the merged YAML, or the body of PUT /schema/sources/:id): the
 * JSON Schema first, then the semantic rules, all problems at once. Pure: no files, no
 * positions (load.ts maps paths to file:line:column). `value` is present only when there
 * are no errors, with every maxFileSize in bytes. `unreadable` names files that failed to
 * parse, so references to objects they may declare are not reported as errors.
 */
export function validateDeclaration(raw: unknown, options: { unreadable?: readonly string[]; storedObjects?: ReadonlySet<string> } = {}): ValidationResult<Declaration> {
  if (!isPlainObject(raw)) {
    return {
      diagnostics: [{ severity: 'error', code: 'SCHEMA_VALIDATION_FAILED', message: 'A declaration must be a mapping with "objects" and "views"', path: [] }],
    };
  }
  const diagnostics = translateAjvErrors(runSchema('declaration', raw), raw, { root: 'declaration' });
  const ctx: RuleContext = { out: diagnostics, skip: new Set(diagnostics.map((d) => JSON.stringify(d.path))) };
  if (options.unreadable?.length) ctx.unreadable = options.unreadable;
  if (options.storedObjects) ctx.storedObjects = options.storedObjects;
  checkDeclarationRules(raw, ctx);
  checkStoredValues(raw, diagnostics);
  if (hasErrors(diagnostics)) return { diagnostics };
  return { value: normalise(raw), diagnostics };
}

/** A copy sharing every untouched node; only attributes with a maxFileSize are rebuilt. */
function normalise(raw: Record<string, unknown>): Declaration {
  const objects: Record<string, ObjectDecl> = {};
  for (const [name, obj] of Object.entries((raw['objects'] ?? {}) as Record<string, ObjectDecl>)) {
    let attributes = obj.attributes;
    for (const [attrName, attr] of Object.entries(obj.attributes)) {
      if (attr.maxFileSize !== undefined && typeof attr.maxFileSize !== 'number') {
        if (attributes === obj.attributes) attributes = { ...obj.attributes };
        attributes[attrName] = { ...attr, maxFileSize: parseSize(attr.maxFileSize)! };
      }
    }
    objects[name] = attributes === obj.attributes ? obj : { ...obj, attributes };
  }
  const out: Declaration = { objects, views: (raw['views'] ?? {}) as Declaration['views'] };
  if (raw['roles'] !== undefined) out.roles = raw['roles'] as NonNullable<Declaration['roles']>;
  return out;
}

/**
 * One AddAttributeInput (POST /schema/objects/:id/attributes), or with `partial` the body
 * of PUT …/attributes/:id (every field optional). Paths are relative to the body
 * (`["maxLength"]`). Relation targets are not checked here: the route knows the objects.
 */
export function validateAttributeInput(
  name: string,
  raw: unknown,
  options: { partial?: boolean } = {},
): ValidationResult<AttributeSpec | Partial<AttributeSpec>> {
  const describeAs = ['attribute', name];
  if (!isPlainObject(raw)) {
    return { diagnostics: [{ severity: 'error', code: 'SCHEMA_VALIDATION_FAILED', message: `Attribute "${name}" must be a mapping of its fields`, path: [] }] };
  }
  const diagnostics = translateAjvErrors(runSchema(options.partial ? 'attributePatch' : 'attribute', raw), raw, { root: 'attribute', describeAs });
  // The rules walk a mapping of attributes; this one sits under its own name.
  const wrapped: RuleContext = { out: [], skip: new Set(diagnostics.map((d) => JSON.stringify([name, ...d.path]))), describeAs: ['attribute'] };
  const { name: _ignored, ...fields } = raw;
  checkAttributes({ [name]: fields }, [], wrapped, undefined);
  for (const d of wrapped.out) diagnostics.push({ ...d, path: d.path.slice(1) });
  // A body may carry a (new) name of its own: it must pass the same rule.
  if (typeof raw['name'] === 'string' && raw['name'] !== name) {
    diagnostics.push(...validateAttributeInputName(raw['name']));
  }
  checkStoredValues(raw, diagnostics, describeAs);
  if (hasErrors(diagnostics)) return { diagnostics };
  const value: Record<string, unknown> = { ...raw };
  if (!options.partial) value['name'] = typeof raw['name'] === 'string' ? raw['name'] : name;
  if (value['maxFileSize'] !== undefined) value['maxFileSize'] = parseSize(value['maxFileSize']);
  return { value: value as unknown as AttributeSpec, diagnostics };
}

/**
 * Every string and key the declaration would store (labels, options, patterns, view
 * fields…) must pass the stored-value rules (stored-values.ts: well-formed Unicode, no
 * prototype keys). Runs last and skips what is already reported at or above its path: a
 * bad name has its own code, a default its own message (the type registry's).
 */
function checkStoredValues(raw: Record<string, unknown>, diagnostics: Diagnostic[], describeAs: Path = []): void {
  const reported = diagnostics.filter((d) => d.severity === 'error').map((d) => d.path);
  for (const p of storedValueProblems(raw, 50)) {
    if (reported.some((r) => r.length <= p.path.length && r.every((seg, i) => seg === p.path[i]))) continue;
    diagnostics.push({
      severity: 'error',
      code: 'SCHEMA_VALIDATION_FAILED',
      message: `${capitalise(describePath([...describeAs, ...p.path]))}: ${describeProblem({ ...p, path: p.path.slice(Math.max(0, subjectLength([...describeAs, ...p.path]) - describeAs.length)) }, '')}`,
      path: p.path,
      ...(p.onKey ? { on: 'key' as const } : {}),
    });
  }
}

const capitalise = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

/** How much of a path describePath names (`objects.deal.attributes.stage` → 4), so the rest is said after it. */
function subjectLength(path: Path): number {
  if (path[0] === 'objects' && typeof path[1] === 'string') return path[2] === 'attributes' && typeof path[3] === 'string' ? 4 : 2;
  return (path[0] === 'views' || path[0] === 'attribute') && typeof path[1] === 'string' ? 2 : 0;
}

function validateAttributeInputName(name: string): Diagnostic[] {
  const result: Diagnostic[] = [];
  const wrapped: RuleContext = { out: result, skip: new Set() };
  checkAttributes({ [name]: {} }, [], wrapped, undefined);
  return result.map((d) => ({ ...d, path: ['name'] }));
}

/** An object name for a new object (POST /schema/objects): the spec's codes, with the near miss. */
export function validateObjectName(name: unknown): Diagnostic[] {
  const problem = objectNameProblem(name);
  if (!problem) return [];
  const suggestion = typeof name === 'string' && problem.code === 'SCHEMA_INVALID_OBJECT_NAME' ? suggestName(name) : undefined;
  return [{ severity: 'error', code: problem.code, message: problem.message, path: ['name'], ...(suggestion ? { suggestion } : {}) }];
}
