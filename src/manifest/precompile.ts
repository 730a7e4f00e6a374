/**
 * What the build pregenerates for manifest validation: the document schema of every kind value a
 * manifest of `kinds` can hold (each kind, each built-in, and an unknown one), compiled the way
 * `validate.ts` compiles them.
 */
import { standaloneModule } from '../common/standalone-code.js';
import { builtinKinds } from './builtins.js';
import type { ManifestKind, ManifestService } from './kinds.js';
import { documentSchemaToCompile, newManifestAjv } from './validate.js';

/**
 * The generated module's source; `serviceLists` are the service lists documents may be validated
 * with (a catalog's, the kinds' own), since the built-in Connection schema depends on them.
 */
export function manifestValidatorsSource(
  kinds: readonly ManifestKind[],
  serviceLists: readonly (readonly ManifestService[])[],
): string {
  const schemas = serviceLists.flatMap((services) =>
    [...kinds.map((k) => k.kind), ...builtinKinds(services).map((b) => b.kind), undefined].map((kindName) =>
      documentSchemaToCompile(kinds, services, kindName),
    ),
  );
  return standaloneModule(newManifestAjv({ code: { source: true } }), schemas);
}
