import { describe, expect, test } from 'vitest';
import type { ManifestKind } from '../../src/manifest/index.js';
import { load, loadErrors, testJobKind, testRoleKind, writeTree } from './helpers.js';

const prunable: ManifestKind = { ...testRoleKind, ownership: 'declared-scope' };
const kinds = [prunable, testJobKind];

function scope(name: string, spec: string): string {
  return `apiVersion: converge/v1\nkind: PruneScope\nmetadata: { name: ${name} }\nspec: ${spec}\n`;
}

describe('PruneScope documents', () => {
  test('are collected with their position', async () => {
    const dir = writeTree({
      'p.yaml': scope('web', '{ kind: TestRole, namespace: default, namePrefix: web- }'),
    });
    const manifest = await load(dir, ['p.yaml'], { kinds });
    expect(manifest.pruneScopes).toMatchObject([
      {
        name: 'web',
        kind: 'TestRole',
        namespace: 'default',
        namePrefix: 'web-',
        source: { file: 'p.yaml', line: 2 },
      },
    ]);
    expect(manifest.resources).toEqual([]);
  });

  test('must name a known kind that can be pruned, with a namespace only where the kind has one', async () => {
    const dir = writeTree({
      'p.yaml': [
        scope('a', '{ kind: Nope }'),
        scope('b', '{ kind: TestJob }'),
        scope('c', '{ kind: TestRole, connection: missing }'),
        scope('d', '{ kind: TestRole, colour: red }'),
        scope('e', '{ kind: testroles }'),
      ].join('---\n'),
    });
    const errors = await loadErrors(dir, ['p.yaml'], { kinds });
    expect(errors).toEqual([
      'p.yaml:2:1: PruneScope "a" names unknown kind "Nope" (known kinds: TestRole, TestJob)',
      'p.yaml:7:1: PruneScope "b": TestJob objects cannot be pruned',
      'p.yaml:12:1: PruneScope "c": no registry connection named "missing" is declared',
      expect.stringMatching(/^p\.yaml:19:\d+: unknown field "colour" in spec/),
      'p.yaml:22:1: PruneScope "e" names unknown kind "testroles"; did you mean "TestRole"? (known kinds: TestRole, TestJob)',
    ]);
  });
});
