/** The `schemasync` library entry point: the engine API. */
export * from './errors.js';
export * from './model/names.js';
export * from './model/attribute.js';
export * from './model/declaration.js';
export * from './model/filter.js';
export * from './model/sizes.js';
export { TYPES, typeDef, isAttributeType, parseValue, isWidening } from './model/types/registry.js';
export type { AttributeTypeDef, Parsed } from './model/types/type-def.js';
export * from './model/stored.js';
export { validateDeclaration, validateAttributeInput, validateObjectName } from './declaration/validate.js';
export type { Diagnostic, ValidationResult } from './declaration/diagnostic.js';
export { loadProject, loadProjectSync, loadDeclarationFiles, loadDeclarationFilesParallel, sortDiagnostics, displayPath } from './declaration/load.js';
export type { LocatedDiagnostic, LoadResult, ProjectLoadResult, LoadedFile } from './declaration/load.js';
export { declarationJsonSchema, projectJsonSchema } from './declaration/json-schema.js';
export { planPush, refusal, isCovered, uncoveredDestructive } from './plan/index.js';
export type { PlanInput, RefusalOptions, Plan, Step, StepAction, StepLabel, Conflict, ConflictCode, PlanSummary, FieldChange, AllowDestructive, DataFacts, Violation, ViolationRule } from './plan/index.js';
