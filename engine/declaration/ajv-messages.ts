import type { ErrorObject } from 'ajv';
import { ATTRIBUTE_TYPES, type AttributeType } from '../model/attribute.js';
import { isAttributeType } from '../model/types/registry.js';
import { describePath, isPlainObject, type Diagnostic, type Path } from './diagnostic.js';
import { SORT_ITEM_SCHEMA, TARGET_FIELDS, declarationJsonSchema, fieldsOfType, projectJsonSchema, roleJsonSchema, viewSchema } from './json-schema.js';
import { closest, suggestType } from './suggest.js';

/**
 * ajv's errors as sentences a person understands (issue 2: never raw ajv text), with the
 * near miss. Name patterns are left to rules.ts, which knows the spec codes.
 */

/** The keys each kind of mapping allows, read from the JSON Schema (the one definition of the format), built on first use. */
let keys: Readonly<Record<Exclude<Kind, 'attribute' | 'other'>, string[]>> | undefined;
function keysOf(kind: Exclude<Kind, 'attribute' | 'other'>): string[] {
  if (!keys) {
    const props = (s: unknown): string[] => Object.keys(((s as { properties?: object }).properties ?? {}) as object);
    const declaration = declarationJsonSchema() as { definitions: { object: unknown } };
    const role = roleJsonSchema() as { properties: { permissions: { items: unknown } } };
    keys = {
      top: props(declaration),
      object: props(declaration.definitions.object),
      view: props(viewSchema()),
      sort: props(SORT_ITEM_SCHEMA),
      role: props(role),
      permission: props(role.properties.permissions.items),
      project: props(projectJsonSchema()),
      target: [...TARGET_FIELDS],
    };
  }
  return keys[kind];
}
const ALL_FIELDS = [...new Set(ATTRIBUTE_TYPES.flatMap((t) => fieldsOfType(t)))];

const TYPE_NOUNS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'a whole number',
  boolean: 'true or false',
  object: 'a mapping',
  array: 'a list',
  null: 'null',
};

/** Which kind of node a path points at, for messages and for the keys it allows. */
type Kind = 'top' | 'object' | 'attribute' | 'view' | 'sort' | 'role' | 'permission' | 'project' | 'target' | 'other';

export interface TranslateOptions {
  /** `project` for schemasync.yaml; `attribute` for one AddAttributeInput at [] */
  root: 'declaration' | 'project' | 'attribute';
  /** Prepended to every path when describing (validateAttributeInput uses ['attribute', name]). */
  describeAs?: Path;
}

export function kindOf(path: Path, root: TranslateOptions['root']): Kind {
  if (root === 'project') return path.length === 0 ? 'project' : path[0] === 'targets' && path.length === 2 ? 'target' : 'other';
  if (root === 'attribute') return path.length === 0 ? 'attribute' : 'other';
  if (path.length === 0) return 'top';
  if (path[0] === 'objects' && path.length === 2) return 'object';
  if (path[0] === 'objects' && path[2] === 'attributes' && path.length === 4) return 'attribute';
  if (path[0] === 'views' && path.length === 2) return 'view';
  if (path[0] === 'views' && path[2] === 'sort' && path.length === 4) return 'sort';
  if (path[0] === 'roles' && path.length === 2) return 'role';
  if (path[0] === 'roles' && path[2] === 'permissions' && path.length === 4) return 'permission';
  return 'other';
}

function toPath(pointer: string, data: unknown): Path {
  if (pointer === '') return [];
  const path: Path = [];
  let node: unknown = data;
  for (const raw of pointer.slice(1).split('/')) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node)) {
      path.push(Number(seg));
      node = node[Number(seg)];
    } else {
      path.push(seg);
      node = isPlainObject(node) ? node[seg] : undefined;
    }
  }
  return path;
}

function at(data: unknown, path: Path): unknown {
  let node = data;
  for (const seg of path) {
    if (Array.isArray(node) && typeof seg === 'number') node = node[seg];
    else if (isPlainObject(node)) node = node[String(seg)];
    else return undefined;
  }
  return node;
}

const capital = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

/** "Attribute "amount" of object "deal"" (or "The project file") for the owner of `path`. */
function owner(path: Path, opts: TranslateOptions): string {
  if (opts.root === 'project') return path[0] === 'targets' && path.length >= 2 ? `Target "${String(path[1])}" in schemasync.yaml` : 'schemasync.yaml';
  return capital(describePath([...(opts.describeAs ?? []), ...path]));
}

/** The owner of a field and the field's name, for `Attribute "a" of object "b": "min" …`. */
function field(path: Path, opts: TranslateOptions): { subject: string; name: string } {
  // Walk back to the nearest node that describePath can name (attribute, object, view).
  for (let i = path.length - 1; i >= 0; i--) {
    const head = path.slice(0, i);
    const kind = kindOf(head, opts.root);
    if (kind !== 'other' && kind !== 'sort' && kind !== 'permission') {
      const rest = path.slice(i);
      return { subject: owner(head, opts), name: rest.map(String).join('.') };
    }
  }
  return { subject: owner([], opts), name: path.map(String).join('.') };
}

function allowedKeys(kind: Kind, node: unknown): string[] {
  switch (kind) {
    case 'top':
    case 'object':
    case 'view':
    case 'sort':
    case 'role':
    case 'permission':
    case 'project':
    case 'target':
      return keysOf(kind);
    case 'attribute': {
      const type = isPlainObject(node) ? node['type'] : undefined;
      return isAttributeType(type) ? fieldsOfType(type) : ALL_FIELDS;
    }
    default:
      return [];
  }
}

/** Types that accept a field, for "options applies to select, multiselect". */
function typesWithField(name: string): AttributeType[] {
  return ATTRIBUTE_TYPES.filter((t) => fieldsOfType(t).includes(name));
}

export function translateAjvErrors(errors: readonly ErrorObject[], data: unknown, opts: TranslateOptions): Diagnostic[] {
  const out: Diagnostic[] = [];
  const seen = new Set<string>();
  const push = (d: Diagnostic): void => {
    const key = `${JSON.stringify(d.path)}|${d.on ?? ''}`;
    if (seen.has(key)) return; // one problem per spot: additionalProperties and a then-branch often both fire
    seen.add(key);
    out.push(d);
  };

  for (const e of errors) {
    // Sub-errors of anyOf alternatives and inner errors of propertyNames are summarised
    // by their parent error; `if` failures are not errors at all.
    if (e.keyword === 'if' || e.schemaPath.includes('/anyOf/') || (e as { propertyName?: string }).propertyName !== undefined) continue;
    const path = toPath(e.instancePath, data);
    const node = at(data, path);
    const kind = kindOf(path, opts.root);
    const p = e.params as Record<string, unknown>;

    switch (e.keyword) {
      case 'additionalProperties': {
        const key = String(p['additionalProperty']);
        const allowed = allowedKeys(kind, node);
        // A field of another type (the per-type branch closes the mapping): say which types take it.
        const type = kind === 'attribute' && isPlainObject(node) ? node['type'] : undefined;
        if (isAttributeType(type) && ALL_FIELDS.includes(key)) {
          push({
            severity: 'error',
            code: 'SCHEMA_VALIDATION_FAILED',
            message: `${owner(path, opts)}: "${key}" does not apply to a ${type} attribute (it applies to ${typesWithField(key).join(', ')})`,
            path: [...path, key],
            on: 'key',
            fix: `Remove "${key}" or change the type.`,
          });
          break;
        }
        const suggestion = closest(key, allowed);
        const where = kind === 'top' ? 'A declaration file' : owner(path, opts);
        push({
          severity: 'error',
          code: 'SCHEMA_VALIDATION_FAILED',
          message: `${where} has an unknown field "${key}"`,
          path: [...path, key],
          on: 'key',
          ...(suggestion ? { suggestion } : {}),
          fix: allowed.length ? `Allowed here: ${allowed.join(', ')}.` : 'Remove it.',
        });
        break;
      }
      case 'const':
        // Only `unique: false` on a type without unique (json, document, …): rules.ts says
        // it in words ("unique" is not available for json attributes).
        break;
      case 'propertyNames':
        // Bad object/attribute/view names (reserved and system names included) are reported
        // by rules.ts with the spec's codes.
        break;
      case 'required': {
        const missing = String(p['missingProperty']);
        let message: string;
        if (kind === 'attribute' && missing === 'type') {
          message = `${owner(path, opts)} has no type (one of ${ATTRIBUTE_TYPES.join(', ')})`;
        } else if (kind === 'attribute' && missing === 'options') {
          message = `${owner(path, opts)} is a ${String((node as Record<string, unknown>)['type'])} and needs "options", the list of allowed values`;
        } else if (kind === 'attribute' && missing === 'target') {
          message = `${owner(path, opts)} is a relation and needs "target", the name of the object it points to`;
        } else if (kind === 'object' && missing === 'attributes') {
          message = `${owner(path, opts)} needs "attributes" (a mapping of attribute name to its fields)`;
        } else if (kind === 'view' && missing === 'object') {
          message = `${owner(path, opts)} needs "object", the name of the object it lists`;
        } else {
          const f = field(path, opts);
          message = `${f.subject}${f.name ? ` ${f.name}` : ''} needs "${missing}"`;
        }
        push({ severity: 'error', code: 'SCHEMA_VALIDATION_FAILED', message, path, ...(kind !== 'other' && kind !== 'sort' && path.length > 0 ? { on: 'key' as const } : {}) });
        break;
      }
      case 'type': {
        const expected = String(p['type'])
          .split(',')
          .map((t) => TYPE_NOUNS[t] ?? t)
          .join(' or ');
        if (kind === 'attribute' && typeof node === 'string') {
          const t = isAttributeType(node) ? node : suggestType(node, ATTRIBUTE_TYPES);
          push({
            severity: 'error',
            code: 'SCHEMA_VALIDATION_FAILED',
            message: `${owner(path, opts)} must be a mapping of its fields, not "${node}"`,
            path,
            fix: `Write it as { type: ${t ?? 'text'} }.`,
          });
          break;
        }
        if (kind === 'object' || kind === 'view' || kind === 'attribute') {
          push({ severity: 'error', code: 'SCHEMA_VALIDATION_FAILED', message: `${owner(path, opts)} must be ${expected} of its fields`, path, on: 'key' });
          break;
        }
        if (kind === 'sort' && typeof node === 'string') {
          push({
            severity: 'error',
            code: 'SCHEMA_VALIDATION_FAILED',
            message: `${owner(path.slice(0, 2), opts)}: sort entries must be mappings, not "${node}"`,
            path,
            fix: `Write it as { attribute: ${node}, direction: asc }.`,
          });
          break;
        }
        const f = field(path, opts);
        const message = f.name ? `${f.subject}: "${f.name}" must be ${expected}` : `${f.subject} must be ${expected}`;
        push({ severity: 'error', code: 'SCHEMA_VALIDATION_FAILED', message, path });
        break;
      }
      case 'enum': {
        const allowed = (p['allowedValues'] as unknown[]).map(String);
        const f = field(path, opts);
        const value = typeof node === 'string' ? node : JSON.stringify(node);
        const isType = path[path.length - 1] === 'type' && kindOf(path.slice(0, -1), opts.root) === 'attribute';
        const suggestion = typeof node === 'string' ? (isType ? suggestType(node, allowed) : closest(node, allowed)) : undefined;
        push({
          severity: 'error',
          code: 'SCHEMA_VALIDATION_FAILED',
          message: isType
            ? `${f.subject} has an unknown type "${value}"`
            : `${f.subject}: "${f.name}" is "${value}" but must be one of ${allowed.join(', ')}`,
          path,
          ...(suggestion ? { suggestion } : {}),
          ...(isType ? { fix: `Types: ${allowed.join(', ')}.` } : {}),
        });
        break;
      }
      case 'anyOf': {
        const f = field(path, opts);
        const last = path[path.length - 1];
        const message =
          last === 'maxFileSize'
            ? `${f.subject}: "maxFileSize" must be a number of bytes or a size such as 512KB, 10MB or 1GB (got ${JSON.stringify(node)})`
            : last === 'schema'
              ? `${f.subject}: "schema" must be a folder or a list of globs`
              : `${f.subject}: "${f.name}" has the wrong shape`;
        push({ severity: 'error', code: 'SCHEMA_VALIDATION_FAILED', message, path });
        break;
      }
      case 'pattern': {
        const f = field(path, opts);
        const inAccepts = path[path.length - 2] === 'accepts';
        const message = inAccepts
          ? `${f.subject}: accepts entry "${String(node)}" must be a MIME type such as application/pdf or a wildcard such as image/*`
          : path[path.length - 1] === 'source' && opts.root === 'project'
            ? `schemasync.yaml: source "${String(node)}" is not a valid source id (lowercase letters, digits, _ and -, starting with a letter, at most 63 characters)`
            : path[path.length - 1] === 'baseUrl'
              ? `schemasync.yaml: baseUrl "${String(node)}" must start with http:// or https://`
              : `${f.subject}: "${f.name}" is not in the expected form`;
        push({ severity: 'error', code: 'SCHEMA_VALIDATION_FAILED', message, path });
        break;
      }
      case 'minimum':
      case 'exclusiveMinimum': {
        const f = field(path, opts);
        push({ severity: 'error', code: 'SCHEMA_VALIDATION_FAILED', message: `${f.subject}: "${f.name}" must be at least ${String(p['limit'])}`, path });
        break;
      }
      case 'minItems': {
        const f = field(path, opts);
        push({ severity: 'error', code: 'SCHEMA_VALIDATION_FAILED', message: `${f.subject}: "${f.name}" must not be empty`, path });
        break;
      }
      case 'minLength': {
        const f = field(path, opts);
        push({ severity: 'error', code: 'SCHEMA_VALIDATION_FAILED', message: `${f.subject}: "${f.name}" must not be an empty string`, path });
        break;
      }
      case 'uniqueItems': {
        const f = field(path, opts);
        const list = Array.isArray(node) ? node : [];
        const j = Number(p['j']);
        push({
          severity: 'error',
          code: 'SCHEMA_VALIDATION_FAILED',
          message: `${f.subject}: "${f.name}" lists ${JSON.stringify(list[j])} twice`,
          path: Number.isInteger(j) ? [...path, Number(p['i'])] : path,
        });
        break;
      }
      default: {
        const f = field(path, opts);
        push({ severity: 'error', code: 'SCHEMA_VALIDATION_FAILED', message: `${f.subject}: "${f.name}" is invalid (${e.keyword})`, path });
      }
    }
  }
  return out;
}
