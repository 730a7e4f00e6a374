/**
 * What the build pregenerates for manifest validation: the document schema of every kind value a
 * manifest of `kinds` can hold (each kind, each built-in, and an unknown one), compiled the way
 * `validate.ts` compiles them.
 */
import { schemaKey } from '../common/precompiled.js';
import { standaloneModule } from '../common/standalone-code.js';
import { builtinKinds } from './builtins.js';
import type { ManifestKind, ManifestService } from './kinds.js';
import { documentSchemaToCompile, newManifestAjv } from './validate.js';

/**
 * The generated modules' sources by schema key, one per document schema, so that validating a
 * manifest loads only its kinds' code (`precompiledFolder`); `serviceLists` are the service lists
 * documents may be validated with (a catalog's, the kinds' own), since the built-in Connection
 * schema depends on them.
 */
export function manifestValidatorModules(
  kinds: readonly ManifestKind[],
  serviceLists: readonly (readonly ManifestService[])[],
): Map<string, string> {
  const modules = new Map<string, string>();
  for (const services of serviceLists)
    for (const kindName of [
      ...kinds.map((k) => k.kind),
      ...builtinKinds(services).map((b) => b.kind),
      undefined,
    ]) {
      const schema = documentSchemaToCompile(kinds, services, kindName);
      const key = schemaKey(schema);
      if (!modules.has(key))
        modules.set(key, standaloneModule(newManifestAjv({ code: { source: true } }), [schema]));
    }
  return modules;
}
