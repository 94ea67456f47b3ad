import type { ErrorCode } from '../errors.js';
import type { AttributeSpec } from '../model/attribute.js';
import type { ObjectDecl, ViewDecl } from '../model/declaration.js';
import type { RoleDecl } from '../model/roles.js';
import type { Violation } from './facts.js';

/**
 * The plan of a source push (contract.md §3): steps `{ action, target, destructive,
 * reason?, affected? }` plus `conflicts: [{ code, target, message }]`. Steps are a
 * discriminated union on `action` so renderers and the store's applier can be
 * `Record<Step['action'], …>` and a missing case fails to compile (architecture.md 2).
 *
 * Targets are `object`, `object.attribute`, `view:name` or `role:name`; `allowDestructive` lists
 * use the same strings (contract.md §3: `["deal.amount", "legacy_object"]`).
 */

/** What kind of change a step is; the policy decides from this which steps may apply. */
export type StepLabel = 'additive' | 'widening' | 'change' | 'destructive';

interface StepBase {
  target: string;
  /** True when applying it loses stored data (drops with data, lossy conversions). */
  destructive: boolean;
  label: StepLabel;
  /** A sentence for people: why this step, or what it loses. */
  reason?: string;
  /** Records or non-null values lost or touched. */
  affected?: number;
  /** Up to five ids of records it touches (lossy conversions), for the refusal and the fix. */
  sampleIds?: string[];
}

export interface CreateObjectStep extends StepBase {
  action: 'create_object';
  object: string;
  decl: ObjectDecl;
}
export interface DropObjectStep extends StepBase {
  action: 'drop_object';
  object: string;
}
export interface RenameObjectStep extends StepBase {
  action: 'rename_object';
  from: string;
  to: string;
}
/** Label/description of an object (no data involved). */
export interface ChangeObjectStep extends StepBase {
  action: 'change_object';
  object: string;
  changes: FieldChange[];
}
export interface AddAttributeStep extends StepBase {
  action: 'add_attribute';
  object: string;
  spec: AttributeSpec;
}
export interface DropAttributeStep extends StepBase {
  action: 'drop_attribute';
  object: string;
  attribute: string;
}
export interface RenameAttributeStep extends StepBase {
  action: 'rename_attribute';
  object: string;
  from: string;
  to: string;
}
/**
 * Type or constraint change. `convert` is set when the type changes: stored values are
 * rewritten with the registry's convertFrom (lossless when label is 'widening').
 * `adopt` is set when the source takes ownership of a runtime attribute it now declares.
 */
export interface ChangeAttributeStep extends StepBase {
  action: 'change_attribute';
  object: string;
  attribute: string;
  from: AttributeSpec;
  to: AttributeSpec;
  changes: FieldChange[];
  convert: boolean;
  adopt?: boolean;
  /** Empty values filled with `to.default` because the attribute becomes required (issue 4 fix of required-over-nulls). */
  backfill?: number;
}
export interface CreateViewStep extends StepBase {
  action: 'create_view';
  view: string;
  decl: ViewDecl;
}
export interface ChangeViewStep extends StepBase {
  action: 'change_view';
  view: string;
  from: ViewDecl;
  to: ViewDecl;
  changes: FieldChange[];
}
/** Custom roles (contract.md §2 `roles:`): no data, so never destructive. Targets are `role:name`. */
export interface CreateRoleStep extends StepBase {
  action: 'create_role';
  role: string;
  decl: RoleDecl;
}
export interface ChangeRoleStep extends StepBase {
  action: 'change_role';
  role: string;
  from: RoleDecl;
  to: RoleDecl;
  changes: FieldChange[];
}
/** `renamedFrom`: the role keeps its keys under the new name. */
export interface RenameRoleStep extends StepBase {
  action: 'rename_role';
  from: string;
  to: string;
}
export interface DropRoleStep extends StepBase {
  action: 'drop_role';
  role: string;
}
export interface DropViewStep extends StepBase {
  action: 'drop_view';
  view: string;
}

export type Step =
  | CreateObjectStep
  | DropObjectStep
  | RenameObjectStep
  | ChangeObjectStep
  | AddAttributeStep
  | DropAttributeStep
  | RenameAttributeStep
  | ChangeAttributeStep
  | CreateViewStep
  | ChangeViewStep
  | DropViewStep
  | CreateRoleStep
  | ChangeRoleStep
  | RenameRoleStep
  | DropRoleStep;

export type StepAction = Step['action'];

/** The steps that change what keys may do (a push with any needs the right to manage keys' roles). */
export const ROLE_STEP_ACTIONS: ReadonlySet<StepAction> = new Set<StepAction>(['create_role', 'change_role', 'rename_role', 'drop_role']);

/** One changed field, old → new (rendered `~ deal.amount: max 10 → 100`). */
export interface FieldChange {
  field: string;
  from: unknown;
  to: unknown;
}

export type ConflictCode = Extract<
  ErrorCode,
  | 'SCHEMA_DUPLICATE_OBJECT'
  | 'SCHEMA_DUPLICATE'
  | 'SCHEMA_SYNC_CONFLICT'
  | 'SCHEMA_OBJECT_REFERENCED'
  | 'SCHEMA_INVALID_OBJECT_NAME'
  | 'SCHEMA_RESERVED_OBJECT_NAME'
  | 'SCHEMA_INVALID_ATTRIBUTE_NAME'
>;

/** A reason the push cannot apply as declared; `fix` says what the user does about it. */
export interface Conflict {
  code: ConflictCode;
  target: string;
  message: string;
  fix?: string;
  rule?: Violation['rule'] | 'ownership' | 'protected' | 'target_protected' | 'type_clash' | 'rename_clash' | 'referenced' | 'missing_target' | 'view_reference' | 'role_keys' | 'role_reference';
  count?: number;
  sampleIds?: string[];
}

export interface Plan {
  source: string;
  /** The source version the plan was made against (0 before the first push). */
  baseVersion: number;
  steps: Step[];
  conflicts: Conflict[];
  summary: PlanSummary;
  /** engine/plan/hash.ts: what a reviewer saw, sent back as `expectPlan` (contract.md §3). */
  planHash: string;
}

export interface PlanSummary {
  create: number;
  change: number;
  drop: number;
  destructive: number;
  conflicts: number;
}

/** `allowDestructive` of the push body: everything, or exactly these targets. */
export type AllowDestructive = boolean | string[];
