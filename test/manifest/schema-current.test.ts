/**
 * The checked-in JSON Schema must match what the kinds registry generates today, or editors would
 * check manifests against stale rules.
 */
import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { renderManifestSchemaJson } from '../../src/manifest/index.js';
import { manifestValidator } from '../../src/manifest/validate.js';
import { defaultCatalog } from '../../src/engine/services.js';

test('schemas/manifest.schema.json is current (regenerate with `npm run schema`)', () => {
  const checkedIn = readFileSync(new URL('../../schemas/manifest.schema.json', import.meta.url), 'utf8');
  const current = renderManifestSchemaJson(defaultCatalog.kinds, defaultCatalog.manifestServices);
  if (checkedIn !== current) {
    expect.fail(
      'schemas/manifest.schema.json is out of date with the kinds in src/resources: run `npm run schema`',
    );
  }
});

test('the registry kinds compile under strict ajv', () => {
  expect(() => manifestValidator(defaultCatalog.kinds, defaultCatalog.manifestServices)).not.toThrow();
});
