/**
 * The kind contract: the required verbs (./contract/kind.ts), the words they use
 * (./contract/core.ts) and the optional capability groups, each in its own file with the type guard
 * the planner, the applier and the engine test for it with.
 */
export * from './contract/core.js';
export * from './contract/kind.js';
export * from './contract/manifest-resource.js';
export * from './contract/apply-switches.js';
export * from './contract/change-impact.js';
export * from './contract/deletion-refusal.js';
export * from './contract/dependencies.js';
export * from './contract/detail-reads.js';
export * from './contract/exportable.js';
export * from './contract/listable.js';
export * from './contract/local-files.js';
export * from './contract/namespaced.js';
export * from './contract/prunable.js';
export * from './contract/render-details.js';
export * from './contract/sensitive-attributes.js';
export * from './contract/server-side-plan.js';
export * from './contract/service-checks.js';
export * from './contract/spec-rules.js';
export * from './contract/upsert-create.js';
export * from './contract/versioned.js';
export * from './contract/write-only-attributes.js';
