/**
 * Every kind Converge ships runs the conformance suite: each kind in the catalog has its own file
 * here, named after the kind (`AclRole` → acl-role.test.ts), that calls `runKindConformance` for it.
 * A new kind without one fails this test, not a user's pull request months later.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { defaultCatalog } from '../../src/engine/services.js';

/** `AclRole` → `acl-role`. */
function conformanceFileOf(kind: string): string {
  return `${kind.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase()}.test.ts`;
}

describe('kind conformance coverage', () => {
  it.each(defaultCatalog.kinds.map((k) => [k.kind]))('%s has a conformance test file', (kind) => {
    const file = fileURLToPath(new URL(`./${conformanceFileOf(kind)}`, import.meta.url));
    expect(
      existsSync(file),
      `[conformance ${kind}] every shipped kind must run the suite: add test/conformance/${conformanceFileOf(kind)}`,
    ).toBe(true);
    const text = readFileSync(file, 'utf8');
    expect(
      text.includes('runKindConformance(') && text.includes(`kind: '${kind}'`),
      `[conformance ${kind}] test/conformance/${conformanceFileOf(kind)} must call runKindConformance({ kind: '${kind}', … })`,
    ).toBe(true);
  });
});
