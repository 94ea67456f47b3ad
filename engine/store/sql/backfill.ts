import type { AttributeSpec } from '../../model/attribute.js';
import { sqlIdent } from '../../model/names.js';
import { typeDef } from '../../model/types/registry.js';
import type { Executor } from '../port.js';
import type { Core } from './context.js';
import { tableIdent } from './idents.js';
import { now } from './time.js';

/**
 * An existing attribute that becomes required with a default: its empty values take the
 * default inside the caller's transaction, so the required-over-nulls fix "give a default"
 * works (issue 4). Whether a change backfills is engine/plan/facts.ts `afterBackfill`; the
 * plan's `~` step and PUT …/attributes/:id both end up here (schema-attributes.ts).
 */
export async function backfillDefault(core: Core, tx: Executor, object: string, spec: AttributeSpec): Promise<void> {
  if (spec.default === undefined || spec.default === null) return;
  const def = typeDef(spec.type);
  const parsed = def.parse(spec.default, spec);
  if (!parsed.ok) throw new Error(`the default of ${object}.${spec.name} is not valid: ${parsed.message}`);
  const col = sqlIdent(spec.name);
  // a filled record is a changed record: its version moves so a client's stale if-match is refused
  await tx.run(`UPDATE ${tableIdent(object)} SET ${col} = ?, version = version + 1, updated_at = ? WHERE ${col} IS NULL`, [
    core.codecs[spec.type].encode(parsed.value, spec),
    now(),
  ]);
}
