/**
 * The build bundles TypeBox, yaml and commander into dist/vendor/ and points dist's imports there
 * (scripts/vendor-bundles.mjs), for start-up time. What must hold once `npm run build` ran (the test
 * script builds first): nothing in dist loads the packages' many modules any more, each bundle offers
 * every name the package does, and the schemas dist builds with TypeBox's bundle are those the
 * sources build, so the validators generated at build are found at run time.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { schemaKey } from '../src/common/precompiled.js';
import { defaultCatalog } from '../src/engine/services.js';
import { documentSchemaToCompile } from '../src/manifest/validate.js';

const dist = fileURLToPath(new URL('../dist/', import.meta.url));
const built = (file: string) => new URL(file, `file://${dist}`).href;

function* compiledModules(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'vendor') yield* compiledModules(full);
    } else if (entry.name.endsWith('.js')) yield full;
  }
}

const VENDORED = {
  '@sinclair/typebox': 'typebox.js',
  yaml: 'yaml.js',
  commander: 'commander.js',
  'js-yaml': 'js-yaml.js',
};

describe('dependencies bundled into dist/vendor/', () => {
  it.each(Object.entries(VENDORED))('%s is imported by no compiled module under its name', (name) => {
    const escaped = name.replace('/', '\\/');
    const byName = new RegExp(`(?:from|import)\\s*\\(?\\s*['"]${escaped}['"]`);
    const importers = [...compiledModules(dist)].filter((f) => byName.test(readFileSync(f, 'utf8')));
    expect(importers.map((f) => path.relative(dist, f))).toEqual([]);
  });

  it('is where the command line, the manifest parser and the kinds import them from', () => {
    expect(readFileSync(path.join(dist, 'cli/program.js'), 'utf8')).toContain(
      "from '../vendor/commander.js'",
    );
    expect(readFileSync(path.join(dist, 'manifest/parse.js'), 'utf8')).toContain("from '../vendor/yaml.js'");
    expect(readFileSync(path.join(dist, 'resources/acl-role.js'), 'utf8')).toContain(
      `from '../vendor/${VENDORED['@sinclair/typebox']}'`,
    );
  });

  it.each(Object.entries(VENDORED))(
    'the bundle of %s exports every name the package does',
    async (name, file) => {
      const bundle = (await import(built(`vendor/${file}`))) as Record<string, unknown>;
      const original = (await import(name)) as Record<string, unknown>;
      const named = (m: Record<string, unknown>) =>
        Object.keys(m)
          .filter((n) => n !== 'default')
          .sort();
      expect(named(bundle)).toEqual(named(original));
    },
  );

  it('builds the schemas the sources build, so every generated validator is found', async () => {
    const { defaultCatalog: builtCatalog } = (await import(built('engine/services.js'))) as {
      defaultCatalog: typeof defaultCatalog;
    };
    const { documentSchemaToCompile: builtSchema } = (await import(built('manifest/validate.js'))) as {
      documentSchemaToCompile: typeof documentSchemaToCompile;
    };
    const requireBuilt = createRequire(import.meta.url);
    // One module per document schema, named by its key (read when a document of the kind is met).
    const generatedFor = (key: string) =>
      (requireBuilt(path.join(dist, 'manifest/validators', `${key}.cjs`)) as Record<string, unknown>)[key];
    expect(builtCatalog.kinds.map((k) => k.kind)).toEqual(defaultCatalog.kinds.map((k) => k.kind));
    for (const kind of [...defaultCatalog.kinds.map((k) => k.kind), 'Connection', 'PruneScope']) {
      const fromDist = builtSchema(builtCatalog.kinds, builtCatalog.manifestServices, kind);
      const fromSources = documentSchemaToCompile(
        defaultCatalog.kinds,
        defaultCatalog.manifestServices,
        kind,
      );
      expect(JSON.stringify(fromDist), kind).toBe(JSON.stringify(fromSources));
      expect(typeof generatedFor(schemaKey(fromDist)), kind).toBe('function');
    }
  });

  it("generates the sandbox config's validator for the schema the built sandbox makes, so a start compiles none", async () => {
    const { buildConfigSchema } = (await import(built('sandbox/config/schema.js'))) as {
      buildConfigSchema: (services: readonly unknown[]) => object;
    };
    const { SANDBOX_SERVICES } = (await import(built('sandbox/services/index.js'))) as {
      SANDBOX_SERVICES: readonly unknown[];
    };
    const generated = createRequire(import.meta.url)(
      path.join(dist, 'sandbox/config/validators.generated.cjs'),
    ) as Record<string, unknown>;
    expect(typeof generated[schemaKey(buildConfigSchema(SANDBOX_SERVICES))]).toBe('function');
  });
});
