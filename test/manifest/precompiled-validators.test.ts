/**
 * The validators the build generates for the shipped kinds (scripts/build-validators.mjs) must say
 * exactly what ajv's compiler says of the same schema, since the messages a user reads are made
 * from their errors: for valid, broken and hostile documents of every kind, the generated validator
 * and the compiled one give the same verdict, the same errors and fill in the same defaults.
 */
import { describe, expect, test } from 'vitest';
import { schemaKey } from '../../src/common/precompiled.js';
import { defaultCatalog } from '../../src/engine/services.js';
import { builtinKinds } from '../../src/manifest/builtins.js';
import { manifestValidatorModules } from '../../src/manifest/precompile.js';
import { documentSchemaToCompile, newManifestAjv } from '../../src/manifest/validate.js';
import { evaluateStandalone, outcome } from '../support/standalone.js';

const kinds = defaultCatalog.kinds;
const services = defaultCatalog.manifestServices;
// One module per document schema, as the build writes them; each must export its own key only.
const modules = manifestValidatorModules(kinds, [services]);
const generated = new Map(
  [...modules].flatMap(([key, source]) => {
    const exported = evaluateStandalone(source);
    expect([...exported.keys()]).toEqual([key]);
    return [...exported];
  }),
);

/** A value of another JSON type than the schema asks for, to provoke a type error there. */
function wrongValue(schema: { type?: unknown } | undefined): unknown {
  return schema?.type === 'string' ? { not: 'a string' } : 'not-what-was-asked';
}

/** Documents of `kind`: valid-looking, empty, every spec field of the wrong type, and hostile ones. */
function documentsOf(kind: string | undefined, spec: { properties?: Record<string, { type?: unknown }> }) {
  const envelope = { apiVersion: 'converge/v1', kind, metadata: { name: 'web' } };
  const properties = spec.properties ?? {};
  return [
    { ...envelope, spec: {} },
    { ...envelope, metadata: { name: 'web', ensure: 'absent' } },
    { ...envelope, metadata: { name: 'Bad Name!', namespace: 'x', Nmae: 1 }, spec: { Nmae: 'x' } },
    { ...envelope, spec: Object.fromEntries(Object.entries(properties).map(([k, s]) => [k, wrongValue(s)])) },
    { ...envelope, apiVersion: 'converge/v2', spec: 'text' },
    // Hostile keys and values: prototype names, control characters, a deep nesting.
    {
      ...envelope,
      metadata: { name: '\u0000\u001b[2J', ['__proto__']: { polluted: true }, constructor: 'x' },
      spec: JSON.parse('{"__proto__": {"polluted": true}, "constructor": {"prototype": 1}}'),
    },
    { ...envelope, spec: Object.fromEntries(Object.keys(properties).map((k) => [k, nested(200)])) },
  ];
}

function nested(depth: number): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < depth; i += 1) value = { a: [value] };
  return value;
}

const kindNames: (string | undefined)[] = [
  ...kinds.map((k) => k.kind),
  ...builtinKinds(services).map((b) => b.kind),
  'NoSuchKind',
  undefined,
];

describe('generated manifest validators', () => {
  test.each(kindNames.map((name) => [String(name), name]))(
    '%s: the generated validator reports what ajv reports',
    (_label, kindName) => {
      const schema = documentSchemaToCompile(kinds, services, kindName);
      const precompiled = generated.get(schemaKey(schema));
      expect(precompiled, 'the build generates a validator for every kind value').toBeDefined();
      const compiled = newManifestAjv().compile(schema);
      const kind = kinds.find((k) => k.kind === kindName);
      const builtin = builtinKinds(services).find((b) => b.kind === kindName);
      const spec = (kind?.specSchema ?? builtin?.specSchema ?? {}) as Parameters<typeof documentsOf>[1];
      const verdicts = documentsOf(kindName, spec).map((document) => {
        const expected = outcome(compiled, document) as { ok: unknown };
        expect(outcome(precompiled!, document)).toEqual(expected);
        return expected.ok;
      });
      // The documents reach the error paths, not only the happy one.
      expect(verdicts).toContain(false);
    },
  );

  test('a schema the build did not see (a changed or a library kind) has no generated validator', () => {
    const schema = documentSchemaToCompile(kinds, services, 'AclRole');
    const changed = { ...schema, description: 'changed after the build' };
    expect(generated.has(schemaKey(schema))).toBe(true);
    expect(generated.has(schemaKey(changed))).toBe(false);
  });
});
