import { declares, type Declaration, type ProjectConfig } from '../model/declaration.js';
import type { Diagnostic } from './diagnostic.js';
import { closest } from './suggest.js';

/**
 * `protect` entries that name nothing the files declare (contract.md §7, issue 19): a
 * warning in `validate` (an error with --strict). Offline, so "declared" is what the files
 * say; an entry for an object the files no longer declare is exactly what stops its drop on
 * that target, which the warning then makes visible.
 */
export function protectDiagnostics(config: ProjectConfig, declaration: Declaration): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const [name, target] of Object.entries(config.targets ?? {})) {
    for (const [i, entry] of (target.protect ?? []).entries()) {
      const [object, attribute] = entry.split('.', 2) as [string, string | undefined];
      const decl = declares(declaration.objects, object) ? declaration.objects[object] : undefined;
      const known = decl !== undefined && (attribute === undefined || declares(decl.attributes, attribute));
      if (known) continue;
      const near = decl !== undefined && attribute !== undefined ? closest(attribute, Object.keys(decl.attributes)) : closest(object, Object.keys(declaration.objects));
      out.push({
        ...(near !== undefined ? { suggestion: decl !== undefined && attribute !== undefined ? `${object}.${near}` : near } : {}),
        severity: 'warning',
        code: 'SCHEMA_VALIDATION_FAILED',
        message: `Target "${name}" protects "${entry}", which no declaration file declares${decl !== undefined ? ` (object "${object}" has no attribute "${attribute}")` : ''}`,
        path: ['targets', name, 'protect', i],
        fix: 'Check the spelling; if it exists only on the instance, protect still refuses its drop there.',
      });
    }
  }
  return out;
}
