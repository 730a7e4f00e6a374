import { Type } from '@sinclair/typebox';
import { describe, expect, test } from 'vitest';
import { defaultCatalog } from '../../src/engine/services.js';
import { formatPosition, type ManifestKind } from '../../src/manifest/index.js';
import { manifestValidator } from '../../src/manifest/validate.js';
import { load, loadErrors, role, testKinds, testRoleKind, writeTree } from './helpers.js';

describe('valid documents', () => {
  test('loads resources with positions, defaults and namespaces', async () => {
    const dir = writeTree({
      'roles.yaml': `# yaml-language-server: $schema=../schemas/manifest.schema.json
apiVersion: converge/v1
kind: TestRole
metadata:
  name: web-readers
  namespace: default
  labels: { team: web }
spec:
  Description: read access
  Policies:
    - Name: service-read
    - Name: node-read
---
${role('ops')}`,
    });
    const manifest = await load(dir, ['roles.yaml']);
    expect(manifest.files).toEqual(['roles.yaml']);
    expect(manifest.resources).toHaveLength(2);
    const [web, ops] = manifest.resources;
    expect(web).toMatchObject({
      kind: 'TestRole',
      name: 'web-readers',
      namespace: 'default',
      labels: { team: 'web' },
      spec: {
        Description: 'read access',
        Level: 1,
        Policies: [{ Name: 'service-read' }, { Name: 'node-read' }],
      },
      source: { file: 'roles.yaml', line: 3, col: 1 },
    });
    expect(web!.sensitivePointers.size).toBe(0);
    expect(formatPosition(web!.locate('/spec/Policies/1/Name'))).toBe('roles.yaml:12:13');
    // A pointer past the document falls back to the nearest existing parent.
    expect(formatPosition(web!.locate('/spec/Policies/7/Name'))).toBe('roles.yaml:11:5');
    expect(ops).toMatchObject({ name: 'ops', source: { line: 15, col: 1 } });
    expect(ops!.namespace).toBeUndefined();
  });

  test('skips empty documents and comment-only documents', async () => {
    const dir = writeTree({ 'a.yaml': `---\n---\n# only a comment\n---\n${role('a')}---\n` });
    const manifest = await load(dir, ['a.yaml']);
    expect(manifest.resources.map((r) => r.name)).toEqual(['a']);
  });

  test('a file with no documents at all is fine', async () => {
    const dir = writeTree({ 'empty.yaml': '', 'a.yaml': role('a') });
    const manifest = await load(dir, ['.']);
    expect(manifest.files).toEqual(['a.yaml', 'empty.yaml']);
    expect(manifest.resources).toHaveLength(1);
  });
});

describe('envelope errors', () => {
  test('missing and unknown apiVersion', async () => {
    const dir = writeTree({
      'a.yaml': `kind: TestRole\nmetadata: { name: a }\nspec: { Description: x }\n---\napiVersion: converge/v2\nkind: TestRole\nmetadata: { name: b }\nspec: { Description: x }\n`,
    });
    expect(await loadErrors(dir, ['a.yaml'])).toEqual([
      'a.yaml:1:1: missing required field "apiVersion" (every document starts with apiVersion: converge/v1)',
      'a.yaml:5:13: unknown apiVersion "converge/v2": it must be converge/v1',
    ]);
  });

  test('unknown kind suggests the nearest known kind and lists them all', async () => {
    const dir = writeTree({
      'a.yaml': 'apiVersion: converge/v1\nkind: TestRoel\nmetadata: { name: a }\nspec: {}\n',
    });
    expect(await loadErrors(dir, ['a.yaml'])).toEqual([
      'a.yaml:2:7: unknown kind "TestRoel"; did you mean "TestRole"? known kinds: Connection, PruneScope, TestJob, TestRole',
    ]);
  });

  test('kind that is not a string', async () => {
    const dir = writeTree({
      'a.yaml': 'apiVersion: converge/v1\nkind: 12\nmetadata: { name: a }\nspec: {}\n',
    });
    expect(await loadErrors(dir, ['a.yaml'])).toEqual(['a.yaml:2:7: kind must be string, got number (12)']);
  });

  test('missing required fields point at the parent', async () => {
    const dir = writeTree({
      'a.yaml': `apiVersion: converge/v1
kind: TestRole
metadata:
  namespace: default
spec:
  Policies:
    - {}
`,
    });
    expect(await loadErrors(dir, ['a.yaml'])).toEqual([
      'a.yaml:3:1: missing required field "name" in metadata',
      'a.yaml:5:1: missing required field "Description" in spec',
      'a.yaml:7:7: missing required field "Name" in spec.Policies[0]',
    ]);
  });

  test('a missing spec is reported at the document', async () => {
    const dir = writeTree({ 'a.yaml': 'apiVersion: converge/v1\nkind: TestRole\nmetadata: { name: a }\n' });
    expect(await loadErrors(dir, ['a.yaml'])).toEqual(['a.yaml:1:1: missing required field "spec"']);
  });

  test('an object declared absent needs no spec (it is only deleted), and its spec rules do not apply', async () => {
    const ruled = {
      ...testRoleKind,
      kind: 'RuledRole',
      validateSpec: () => [{ pointer: '', message: 'never' }],
    };
    const dir = writeTree({
      'a.yaml':
        'apiVersion: converge/v1\nkind: TestRole\nmetadata: { name: gone, ensure: absent }\n---\napiVersion: converge/v1\nkind: RuledRole\nmetadata: { name: old, ensure: absent }\nspec: { Description: x }\n',
    });
    const manifest = await load(dir, ['a.yaml'], { kinds: [testRoleKind, ruled] });
    expect(manifest.resources.map((r) => [r.name, r.ensure, r.spec])).toEqual([
      ['gone', 'absent', {}],
      ['old', 'absent', { Description: 'x', Level: 1 }],
    ]);
  });

  test('a mistyped ensure is the one problem of a document without spec, not also "missing spec"', async () => {
    const dir = writeTree({
      'a.yaml': 'apiVersion: converge/v1\nkind: TestRole\nmetadata: { name: gone, ensure: Absent }\n',
      'b.yaml': 'apiVersion: converge/v1\nkind: TestRole\nmetadata: { name: kept }\n',
    });
    expect(await loadErrors(dir, ['a.yaml'])).toEqual([
      'a.yaml:3:33: metadata.ensure must be one of "present", "absent", got "Absent"',
    ]);
    // Without an ensure, a missing spec is still said.
    expect(await loadErrors(dir, ['b.yaml'])).toEqual(['b.yaml:1:1: missing required field "spec"']);
  });

  test('unknown fields point at the key and name it', async () => {
    const dir = writeTree({
      'a.yaml': `apiVersion: converge/v1
kind: TestRole
extra: 1
metadata:
  name: a
  owner: me
spec:
  Description: x
  description: y
  Colour: blue
  Policies:
    - Name: p
      Version: 2
`,
    });
    expect(await loadErrors(dir, ['a.yaml'])).toEqual([
      'a.yaml:3:1: unknown field "extra" (allowed: apiVersion, kind, metadata, spec)',
      'a.yaml:6:3: unknown field "owner" in metadata (allowed: name, namespace, connection, labels, ensure)',
      'a.yaml:9:3: unknown field "description" in spec; did you mean "Description"?',
      'a.yaml:10:3: unknown field "Colour" in spec (allowed: Description, Level, Token, Policies, Mode)',
      'a.yaml:13:7: unknown field "Version" in spec.Policies[0] (allowed: Name)',
    ]);
  });

  test('namespace on a kind without namespaces', async () => {
    const dir = writeTree({
      'a.yaml':
        'apiVersion: converge/v1\nkind: TestJob\nmetadata:\n  name: j\n  namespace: x\nspec: { Datacenters: [dc1] }\n',
    });
    expect(await loadErrors(dir, ['a.yaml'])).toEqual([
      'a.yaml:5:3: "namespace" is not allowed: TestJob objects have no namespace',
    ]);
  });

  test('wrong types say what was expected and what was found', async () => {
    const dir = writeTree({
      'a.yaml': `apiVersion: converge/v1
kind: TestRole
metadata: { name: a }
spec:
  Description: 42
  Level: "2"
  Policies: { Name: p }
---
apiVersion: converge/v1
kind: TestJob
metadata: { name: j }
spec:
  Datacenters: dc1
`,
    });
    expect(await loadErrors(dir, ['a.yaml'])).toEqual([
      'a.yaml:5:16: spec.Description must be string, got number (42)',
      'a.yaml:6:10: spec.Level must be integer, got string ("2")',
      'a.yaml:7:13: spec.Policies must be array, got object',
      'a.yaml:13:16: spec.Datacenters must be array, got string ("dc1")',
    ]);
  });

  test('invalid names state the rule', async () => {
    const dir = writeTree({
      'a.yaml': `${role('Web_Readers')}---\n${role(`a${'b'.repeat(40)}`)}`,
    });
    expect(await loadErrors(dir, ['a.yaml'])).toEqual([
      'a.yaml:4:9: invalid TestRole name "Web_Readers": must match the pattern ^[a-z][a-z0-9-]*$ (lowercase letters, digits and dashes, starting with a letter)',
      `a.yaml:11:9: invalid TestRole name "a${'b'.repeat(40)}": must be at most 32 characters long (lowercase letters, digits and dashes, starting with a letter)`,
    ]);
  });

  test('values out of range and literal unions', async () => {
    const dir = writeTree({ 'a.yaml': role('a', '  Level: -1\n  Mode: admin\n') });
    expect(await loadErrors(dir, ['a.yaml'])).toEqual([
      'a.yaml:7:10: spec.Level must be >= 0, got -1',
      'a.yaml:8:9: spec.Mode must be one of "read", "write", got "admin"',
    ]);
  });

  test('an empty value is reported at its key', async () => {
    const dir = writeTree({
      'a.yaml': 'apiVersion: converge/v1\nkind: TestRole\nmetadata:\n  name: a\nspec:\n',
    });
    expect(await loadErrors(dir, ['a.yaml'])).toEqual(['a.yaml:5:1: spec must be object, got null']);
  });

  test('unions of shapes report the errors of the branch that was probably meant', async () => {
    const linkKind: ManifestKind = {
      kind: 'TestLink',
      service: 'registry',
      description: 'Links by ID or by name.',
      nameSchema: Type.String(),
      specSchema: Type.Object(
        {
          Links: Type.Array(
            Type.Union(
              [
                Type.Object(
                  { ID: Type.String({ format: 'uuid' }), Name: Type.Optional(Type.String()) },
                  { additionalProperties: false },
                ),
                Type.Object({ Name: Type.String() }, { additionalProperties: false }),
                Type.String({ pattern: '^[a-z]+$' }),
              ],
              { description: 'a link by ID, by Name, or a bare name' },
            ),
          ),
        },
        { additionalProperties: false },
      ),
    };
    const dir = writeTree({
      'a.yaml':
        'apiVersion: converge/v1\nkind: TestLink\nmetadata: { name: l }\nspec:\n  Links:\n    - { Name: 5 }\n    - { ID: not-a-uuid }\n    - { Other: 1 }\n    - UPPER\n    - 12\n',
    });
    expect(await loadErrors(dir, ['a.yaml'], { kinds: [linkKind] })).toEqual([
      'a.yaml:6:15: spec.Links[0].Name must be string, got number (5)',
      'a.yaml:7:13: spec.Links[1].ID must be a valid uuid, got "not-a-uuid"',
      'a.yaml:8:7: spec.Links[2] does not match any of the allowed forms (a link by ID, by Name, or a bare name)',
      'a.yaml:9:7: spec.Links[3] must match the pattern ^[a-z]+$, got "UPPER"',
      'a.yaml:10:7: spec.Links[4] does not match any of the allowed forms (a link by ID, by Name, or a bare name)',
    ]);
  });

  test('a misspelt key that no form of a union allows gets a suggestion, not "no form matches"', async () => {
    // The shape of AclRole's Policies: {ID, Name?} or {Name}. "Nmae" is unknown to both forms and
    // leaves both short of a required key, so neither form fits better than the other.
    const policyKind: ManifestKind = {
      kind: 'TestPolicyRole',
      service: 'registry',
      description: 'Policies by ID or by name.',
      nameSchema: Type.String(),
      specSchema: Type.Object(
        {
          Policies: Type.Array(
            Type.Union(
              [
                Type.Object(
                  { ID: Type.String({ format: 'uuid' }), Name: Type.Optional(Type.String()) },
                  { additionalProperties: false },
                ),
                Type.Object({ Name: Type.String() }, { additionalProperties: false }),
              ],
              { description: 'a policy by ID or by Name' },
            ),
          ),
        },
        { additionalProperties: false },
      ),
    };
    const dir = writeTree({
      'a.yaml': `apiVersion: converge/v1
kind: TestPolicyRole
metadata: { name: flow }
spec:
  Policies: [{ Nmae: x }, { id: 2a9b9a0d-0cb2-4cec-954a-9c63f16c8730 }]
---
apiVersion: converge/v1
kind: TestPolicyRole
metadata: { name: block }
spec:
  Policies:
    - Nmae: x
    - ID: 2a9b9a0d-0cb2-4cec-954a-9c63f16c8730
      Nmae: y
    - Other: 1
    - Name: 5
`,
    });
    expect(await loadErrors(dir, ['a.yaml'], { kinds: [policyKind] })).toEqual([
      'a.yaml:5:16: unknown field "Nmae" in spec.Policies[0]; did you mean "Name"?',
      'a.yaml:5:29: unknown field "id" in spec.Policies[1]; did you mean "ID"?',
      'a.yaml:12:7: unknown field "Nmae" in spec.Policies[0]; did you mean "Name"?',
      'a.yaml:14:7: unknown field "Nmae" in spec.Policies[1]; did you mean "Name"?',
      // Nothing close to a known key: the union's own message, which describes the forms.
      'a.yaml:15:7: spec.Policies[2] does not match any of the allowed forms (a policy by ID or by Name)',
      'a.yaml:16:13: spec.Policies[3].Name must be string, got number (5)',
    ]);
  });

  test("a key unknown beside a form's own keys is told with every form's keys", async () => {
    // AclRole's own kind: `{ Name, Idd }` fits the by-Name form best, which allowed only `Name`, so
    // the message said "(allowed: Name)" although `ID` may be given beside it (a new-user trial).
    const kinds = defaultCatalog.kinds;
    const services = defaultCatalog.manifestServices;
    const dir = writeTree({
      'a.yaml': `apiVersion: converge/v1
kind: AclRole
metadata: { name: r3 }
spec:
  Policies:
    - { Name: x, Idd: 3 }
    - { Name: x, Colour: blue }
    - { ID: 2a9b9a0d-0cb2-4cec-954a-9c63f16c8730, Nmae: y }
`,
    });
    expect(await loadErrors(dir, ['a.yaml'], { kinds, services })).toEqual([
      'a.yaml:6:18: unknown field "Idd" in spec.Policies[0]; did you mean "ID"?',
      'a.yaml:7:18: unknown field "Colour" in spec.Policies[1] (allowed: ID, Name)',
      'a.yaml:8:51: unknown field "Nmae" in spec.Policies[2]; did you mean "Name"?',
    ]);
  });

  test('a YAML file that is not a manifest gets one line, not a list of fields', async () => {
    const dir = writeTree({ 'compose.yaml': 'services:\n  web:\n    image: nginx\n' });
    expect(await loadErrors(dir, ['.'])).toEqual([
      'compose.yaml:1:1: not a Converge manifest document: it has neither apiVersion nor kind (expected apiVersion: converge/v1, kind, metadata, spec)',
    ]);
  });

  test('a document that is not a mapping', async () => {
    const dir = writeTree({ 'a.yaml': `${role('a')}---\n- just\n- a list\n---\nplain words\n` });
    expect(await loadErrors(dir, ['a.yaml'])).toEqual([
      'a.yaml:8:1: a manifest document must be a mapping with apiVersion, kind, metadata and spec',
      'a.yaml:11:1: a manifest document must be a mapping with apiVersion, kind, metadata and spec',
    ]);
  });
});

describe('reporting', () => {
  test('reports every problem of every file at once, sorted by file then line', async () => {
    const dir = writeTree({
      'b.yaml': `${role('b', '  Level: x\n')}---\napiVersion: converge/v1\nkind: Nope\nmetadata: { name: n }\nspec: {}\n`,
      'a.yaml': `${role('A')}---\n${role('ok', '  Extra: 1\n')}`,
    });
    const lines = await loadErrors(dir, ['b.yaml', 'a.yaml']);
    expect(lines).toEqual([
      'a.yaml:4:9: invalid TestRole name "A": must match the pattern ^[a-z][a-z0-9-]*$ (lowercase letters, digits and dashes, starting with a letter)',
      'a.yaml:14:3: unknown field "Extra" in spec (allowed: Description, Level, Token, Policies, Mode)',
      'b.yaml:7:10: spec.Level must be integer, got string ("x")',
      'b.yaml:10:7: unknown kind "Nope"; known kinds: Connection, PruneScope, TestJob, TestRole',
    ]);
  });

  test('the error carries structured problems too', async () => {
    const dir = writeTree({ 'a.yaml': role('a', '  Level: x\n') });
    const error = await load(dir, ['a.yaml']).catch((e: unknown) => e);
    expect(error).toMatchObject({
      name: 'ManifestError',
      problems: [
        { position: { file: 'a.yaml', line: 7, col: 10 }, message: expect.stringContaining('spec.Level') },
      ],
    });
  });

  test('the same kind list is compiled once and reused', async () => {
    const kinds = [...testKinds];
    const first = manifestValidator(kinds);
    const dir = writeTree({ 'a.yaml': role('a') });
    await load(dir, ['a.yaml'], { kinds });
    expect(manifestValidator(kinds)).toBe(first);
    // Another list (another registry of kinds) gets its own validator.
    expect(manifestValidator([...testKinds])).not.toBe(first);
  });
});
