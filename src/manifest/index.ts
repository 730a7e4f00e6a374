/**
 * The manifest layer: load YAML manifests, interpolate `${env:...}` / `${file:...}`, validate them
 * against the kinds' schemas, and keep source positions for every later error.
 */
export { BUILTIN_KIND_NAMES, type BuiltinKind, builtinKinds } from './builtins.js';
export { API_VERSION, type ManifestKind, type ManifestService } from './kinds.js';
export { type LoadManifestOptions, loadManifest, sortProblems } from './load.js';
export { positionParserLoaded } from './position-parser.js';
export { withoutSecrets } from './sensitive-identity.js';
export { buildManifestSchema, MANIFEST_SCHEMA_ID, renderManifestSchemaJson } from './schema.js';
export * from './types.js';
export type { ManifestResource } from '../resources/contract.js';
export { type ManifestFileReader, type ManifestFileResult } from '../common/confined-files.js';
