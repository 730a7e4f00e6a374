/**
 * Documents are loaded one at a time and their syntax trees let go; positions asked for later (a
 * plan's problem at `spec.Policies[1]`) come from parsing the file again. These tests hold the user's
 * view of that: every position still names the right line of the right document.
 */
import { describe, expect, test } from 'vitest';
import { formatPosition } from '../../src/manifest/index.js';
import { load, loadErrors, role, writeTree } from './helpers.js';

const policies = '  Policies:\n    - Name: first\n    - Name: second\n';

describe('positions after loading', () => {
  test('point into the right document of a file with directives, empty documents, comments and merge keys', async () => {
    // Lines: each role() is 6 lines, `policies` 3 more.
    const text = [
      '%YAML 1.2\n---\n# only a comment\n',
      '\n',
      `${role('one')}${policies}`,
      '# a comment-only document\n',
      `${role('two')}${policies}`,
      `${role('three')}  <<: { Level: 1 }\n${policies}`,
    ].join('---\n');
    const dir = writeTree({ 'roles.yaml': text });
    const manifest = await load(dir, ['roles.yaml']);
    expect(manifest.resources.map((r) => r.name)).toEqual(['one', 'two', 'three']);
    const lines = text.split('\n');
    const lineOf = (needle: string, from: number) =>
      lines.findIndex((l, i) => i >= from && l.includes(needle)) + 1;
    const starts = ['one', 'two', 'three'].map((name) => lineOf(`name: ${name}`, 0));
    for (const [i, resource] of manifest.resources.entries()) {
      const second = lineOf('- Name: second', starts[i]!);
      expect(formatPosition(resource.locate('/spec/Policies/1/Name'))).toBe(`roles.yaml:${second}:13`);
      expect(formatPosition(resource.locate('/spec/Policies/1'))).toBe(`roles.yaml:${second}:7`);
    }
  });
});

describe('a file that nests too deep after valid documents', () => {
  test('reports the nesting alone: the earlier documents of that file add nothing, other files still count', async () => {
    const dir = writeTree({
      'a.yaml': `${role('fine')}---\n${role('bad-spec', '  Unknown: 1\n')}---\n${role('deep', `  Description2: ${'['.repeat(100)}\n`)}`,
      'b.yaml': role('other', '  Unknown: 1\n'),
    });
    const errors = await loadErrors(dir, ['a.yaml', 'b.yaml']);
    expect(errors[0]).toMatch(
      /^a\.yaml:22:\d+: values are nested more than 64 levels deep; the file is not read further$/,
    );
    expect(errors.filter((e) => e.startsWith('a.yaml'))).toHaveLength(1);
    expect(errors.filter((e) => e.startsWith('b.yaml')).length).toBeGreaterThan(0);
  });
});
