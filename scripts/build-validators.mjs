// After tsc: writes ajv's standalone validators beside the modules that look them up, so that
// `converge validate` and `plan` neither load ajv's compiler nor compile a schema at run time for
// the shipped kinds and service answers (src/common/precompiled.ts). A schema that is not here
// (a library user's kind) is still compiled with ajv, so a build without this step only runs slower.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dist = new URL('../dist/', import.meta.url);
const { defaultCatalog } = await import(new URL('engine/services.js', dist).href);
const { servicesOfKinds } = await import(new URL('manifest/kinds.js', dist).href);
const { manifestValidatorModules } = await import(new URL('manifest/precompile.js', dist).href);
const { responseValidatorsSource } = await import(new URL('clients/http/precompile.js', dist).href);

const kinds = defaultCatalog.kinds;
// One module per document schema, read when a document of the kind is met (start-up, issue 20).
const manifestFolder = new URL('manifest/validators/', dist);
rmSync(manifestFolder, { recursive: true, force: true });
rmSync(new URL('manifest/validators.generated.cjs', dist), { force: true });
mkdirSync(manifestFolder, { recursive: true });
const manifest = manifestValidatorModules(kinds, [defaultCatalog.manifestServices, servicesOfKinds(kinds)]);
for (const [key, source] of manifest) writeFileSync(new URL(`${key}.cjs`, manifestFolder), source);

// Every schema a service folder's responses.js exports (a lazy schema is a function that builds it).
const shapes = [];
for (const entry of readdirSync(new URL('clients/', dist), { withFileTypes: true })) {
  if (!entry.isDirectory()) continue;
  const file = new URL(`clients/${entry.name}/responses.js`, dist);
  let module;
  try {
    module = await import(file.href);
  } catch (error) {
    if (error.code === 'ERR_MODULE_NOT_FOUND' && error.message.includes(fileURLToPath(file))) continue;
    throw error;
  }
  shapes.push(
    ...Object.values(module).filter((value) => typeof value === 'function' || typeof value === 'object'),
  );
}
writeFileSync(new URL('clients/http/validators.generated.cjs', dist), responseValidatorsSource(shapes));

// The sandbox's config schema for its built-in services: compiling it took ~0.3 s of every start.
const { configValidatorsSource } = await import(new URL('sandbox/config/precompile.js', dist).href);
const { SANDBOX_SERVICES } = await import(new URL('sandbox/services/index.js', dist).href);
writeFileSync(
  new URL('sandbox/config/validators.generated.cjs', dist),
  configValidatorsSource(SANDBOX_SERVICES),
);
console.log(
  `wrote standalone validators: ${kinds.length} kinds + built-ins (${manifest.size} modules), ${shapes.length} response schemas, the sandbox config`,
);
