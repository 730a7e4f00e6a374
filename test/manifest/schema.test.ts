import { Type } from '@sinclair/typebox';
import { Ajv } from 'ajv';
import { describe, expect, test } from 'vitest';
import { buildManifestSchema, renderManifestSchemaJson } from '../../src/manifest/index.js';
import { testKinds, testRoleKind } from './helpers.js';

interface Branch {
  additionalProperties: boolean;
  properties: {
    kind: { const: string };
    metadata: { additionalProperties: boolean; properties: Record<string, unknown> };
    spec: unknown;
  };
}
type RootSchema = Record<string, unknown> & { oneOf: Branch[] };

describe('buildManifestSchema', () => {
  test('a draft-07 root that dispatches on kind, one branch per kind plus the built-ins', () => {
    const schema = buildManifestSchema(testKinds) as unknown as RootSchema;
    expect(schema).toMatchObject({
      $schema: 'http://json-schema.org/draft-07/schema#',
      $id: expect.any(String),
      title: expect.any(String),
      type: 'object',
      discriminator: { propertyName: 'kind' },
      additionalProperties: false,
    });
    expect(schema.oneOf.map((branch) => branch.properties.kind.const)).toEqual([
      'TestRole',
      'TestJob',
      'Connection',
      'PruneScope',
    ]);
    const [roleBranch, jobBranch] = schema.oneOf as [Branch, Branch];
    expect(roleBranch.additionalProperties).toBe(false);
    expect(roleBranch.properties.metadata.additionalProperties).toBe(false);
    expect(roleBranch.properties.metadata.properties.name).toBe(testRoleKind.nameSchema);
    expect(roleBranch.properties.spec).toBe(testRoleKind.specSchema);
    // Kinds without namespaces do not get the field at all.
    expect(Object.keys(jobBranch.properties.metadata.properties)).toEqual([
      'name',
      'connection',
      'labels',
      'ensure',
    ]);
  });

  test('compiles under plain (non-strict) draft-07 validators too, as editors use it', () => {
    const ajv = new Ajv({ strict: false });
    const validate = ajv.compile(JSON.parse(renderManifestSchemaJson(testKinds)));
    expect(
      validate({
        apiVersion: 'converge/v1',
        kind: 'TestJob',
        metadata: { name: 'j' },
        spec: { Datacenters: [] },
      }),
    ).toBe(true);
    expect(validate({ apiVersion: 'converge/v1', kind: 'TestJob', metadata: { name: 'j' }, spec: {} })).toBe(
      false,
    );
  });

  test('the rendered file has sorted keys and ends with a newline', () => {
    const text = renderManifestSchemaJson(testKinds);
    expect(text.endsWith('}\n')).toBe(true);
    const topKeys = Object.keys(JSON.parse(text));
    expect(topKeys).toEqual([...topKeys].sort());
    expect(renderManifestSchemaJson([...testKinds])).toBe(text);
  });

  test('refuses a kind registered twice or named like a built-in kind', () => {
    expect(() => buildManifestSchema([testRoleKind, testRoleKind])).toThrow(
      'kind TestRole is registered twice',
    );
    expect(() =>
      buildManifestSchema([{ ...testRoleKind, kind: 'Connection', specSchema: Type.Object({}) }]),
    ).toThrow('kind Connection is built into the manifest layer');
  });
});
