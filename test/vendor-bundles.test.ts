/**
 * The build bundles TypeBox into dist/vendor/typebox.js and points dist's imports there
 * (scripts/vendor-bundles.mjs), for start-up time. What must hold once `npm run build` ran (the test
 * script builds first): nothing in dist loads the package's ~200 modules any more, the bundle offers
 * everything the package does, and the schemas dist builds with it are those the sources build, so
 * the validators generated at build are found at run time.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as TypeBox from '@sinclair/typebox';
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

describe('TypeBox bundled into dist/vendor/', () => {
  it('is imported by no compiled module under its package name', () => {
    const byName = [...compiledModules(dist)].filter((file) =>
      /(?:from|import)\s*\(?\s*['"]@sinclair\/typebox['"]/.test(readFileSync(file, 'utf8')),
    );
    expect(byName.map((file) => path.relative(dist, file))).toEqual([]);
    expect(readFileSync(path.join(dist, 'resources/acl-role.js'), 'utf8')).toContain(
      "from '../vendor/typebox.js'",
    );
  });

  it('exports every name the package exports', async () => {
    const bundle = (await import(built('vendor/typebox.js'))) as Record<string, unknown>;
    expect(Object.keys(bundle).sort()).toEqual(Object.keys(TypeBox).sort());
  });

  it('builds the schemas the sources build, so every generated validator is found', async () => {
    const { defaultCatalog: builtCatalog } = (await import(built('engine/services.js'))) as {
      defaultCatalog: typeof defaultCatalog;
    };
    const { documentSchemaToCompile: builtSchema } = (await import(built('manifest/validate.js'))) as {
      documentSchemaToCompile: typeof documentSchemaToCompile;
    };
    const generated = createRequire(import.meta.url)(
      path.join(dist, 'manifest/validators.generated.cjs'),
    ) as Record<string, unknown>;
    expect(builtCatalog.kinds.map((k) => k.kind)).toEqual(defaultCatalog.kinds.map((k) => k.kind));
    for (const kind of [...defaultCatalog.kinds.map((k) => k.kind), 'Connection', 'PruneScope']) {
      const fromDist = builtSchema(builtCatalog.kinds, builtCatalog.manifestServices, kind);
      const fromSources = documentSchemaToCompile(
        defaultCatalog.kinds,
        defaultCatalog.manifestServices,
        kind,
      );
      expect(JSON.stringify(fromDist), kind).toBe(JSON.stringify(fromSources));
      expect(typeof generated[schemaKey(fromDist)], kind).toBe('function');
    }
  });
});
