import type { Declaration } from '../model/declaration.js';
import type { AllowDestructive, Plan } from './types.js';

/**
 * PUT /schema/sources/:id on the wire (contract.md §3 "Schema"): the one definition of its
 * body and its answer, which the server's route, the store and the SDK (shipped as
 * `schemasync/sdk`, whose PushOptions and PushAnswer are these) all use. The route's JSON
 * Schema (engine/server/schemas/admin.ts pushSourceSchema) validates the same fields.
 */
export interface PushRequest {
  declaration: Declaration;
  dryRun?: boolean;
  allowDestructive?: AllowDestructive;
  /** The planHash a reviewer saw: the server applies only that plan, else 409 SCHEMA_CONFLICT. */
  expectPlan?: string;
}

/** What a caller chooses about one push: the body's options, and the source version it planned against. */
export interface PushChoices extends Omit<PushRequest, 'declaration'> {
  /** The source version the push was planned against (sent as `if-match: "<n>"`). */
  ifMatch?: number;
}

/** The answer: 200 `{ version, applied, plan }`. */
export interface PushAnswer {
  version: number;
  applied: boolean;
  plan: Plan;
}
