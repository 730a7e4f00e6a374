/**
 * Writes schemas/manifest.schema.json from the kinds registry (`npm run schema`). Editors read it
 * through `# yaml-language-server: $schema=../schemas/manifest.schema.json`; the test
 * test/manifest/schema-current.test.ts fails when the checked-in copy is out of date.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { renderManifestSchemaJson } from '../src/manifest/index.js';
import { defaultCatalog } from '../src/engine/services.js';

const target = fileURLToPath(new URL('../schemas/manifest.schema.json', import.meta.url));
writeFileSync(target, renderManifestSchemaJson(defaultCatalog.kinds, defaultCatalog.manifestServices));
console.log(`wrote schemas/manifest.schema.json (${defaultCatalog.kinds.length} resource kinds + built-ins)`);
