import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { load, loadErrors, role, writeTree } from './helpers.js';

describe('finding manifest files', () => {
  test('a folder is searched recursively for .yaml and .yml, in sorted order', async () => {
    const dir = writeTree({
      'infra/b.yml': role('b'),
      'infra/a.yaml': role('a'),
      'infra/z/deep/c.yaml': role('c'),
      'infra/m/d.YAML': role('d'),
      'infra/README.md': '# not a manifest',
      'infra/notes.txt': 'kind: nothing',
      'infra/.hidden/e.yaml': role('hidden'),
      'infra/.e.yaml': role('hidden-file'),
      'infra/node_modules/pkg/f.yaml': role('dependency'),
    });
    const manifest = await load(dir, ['infra']);
    expect(manifest.files).toEqual([
      path.join('infra', 'a.yaml'),
      path.join('infra', 'b.yml'),
      path.join('infra', 'm', 'd.YAML'),
      path.join('infra', 'z', 'deep', 'c.yaml'),
    ]);
    expect(manifest.resources.map((r) => r.name)).toEqual(['a', 'b', 'd', 'c']);
  });

  test('several paths keep their order, and a file named twice is read once', async () => {
    const dir = writeTree({
      'x/one.yaml': role('one'),
      'two.yaml': role('two'),
      'x/three.yaml': role('three'),
    });
    const manifest = await load(dir, ['two.yaml', 'x', './x/one.yaml']);
    expect(manifest.files).toEqual(['two.yaml', path.join('x', 'one.yaml'), path.join('x', 'three.yaml')]);
  });

  test('a missing .yml names the .yaml beside it, and a path too long is said so, cut short', async () => {
    const dir = writeTree({ 'team.yaml': role('a') });
    expect(await loadErrors(dir, ['team.yml'])).toEqual([
      'team.yml: no such file or folder (not found); did you mean team.yaml?',
    ]);
    const long = 'x'.repeat(5000);
    const [line] = await loadErrors(dir, [long]);
    expect(line).toBe(`${'x'.repeat(120)}…: the path is too long for this system`);
  });

  test('a file named explicitly is read whatever its extension', async () => {
    const dir = writeTree({ 'manifest.txt': role('a') });
    const manifest = await load(dir, ['manifest.txt']);
    expect(manifest.resources).toHaveLength(1);
  });

  test('absolute paths work and are shown as given', async () => {
    const dir = writeTree({ 'a.yaml': role('a', '  Level: x\n') });
    const file = path.join(dir, 'a.yaml');
    expect(await loadErrors('/', [file])).toEqual([
      `${file}:7:10: spec.Level must be integer, got string ("x")`,
    ]);
  });

  test('missing paths and folders without manifests are errors naming them', async () => {
    const dir = writeTree({ 'docs/readme.md': 'hi', 'a.yaml': role('a') });
    fs.mkdirSync(path.join(dir, 'empty'));
    expect(await loadErrors(dir, ['a.yaml', 'missing.yaml', 'empty', 'docs'])).toEqual([
      'docs: folder has no .yaml or .yml files',
      'empty: folder has no .yaml or .yml files',
      'missing.yaml: no such file or folder (not found)',
    ]);
  });

  test('files that declare nothing at all are refused, each named; one declaring something is enough', async () => {
    const dir = writeTree({
      'empty.yaml': '',
      'comments/only.yaml': '# the roles moved to another repository\n',
      'comments/separators.yml': '---\n# nothing here\n---\n',
      'mixed/empty.yaml': '',
      'mixed/role.yaml': role('a'),
    });
    expect(await loadErrors(dir, ['empty.yaml'])).toEqual([
      'empty.yaml: declares nothing: the file is empty or holds only comments',
    ]);
    expect(await loadErrors(dir, ['comments'])).toEqual([
      `${path.join('comments', 'only.yaml')}: declares nothing: the file is empty or holds only comments`,
      `${path.join('comments', 'separators.yml')}: declares nothing: the file is empty or holds only comments`,
    ]);
    // An empty file beside declarations is a placeholder, not a mistake.
    expect((await load(dir, ['mixed'])).resources).toHaveLength(1);
  });

  test('no paths at all', async () => {
    expect(await loadErrors(writeTree({}), [])).toEqual(['.: no manifest files or folders given']);
  });

  test('problems in other files are still all reported next to a missing path', async () => {
    const dir = writeTree({ 'a.yaml': role('a', '  Level: x\n') });
    expect(await loadErrors(dir, ['a.yaml', 'nope'])).toEqual([
      'a.yaml:7:10: spec.Level must be integer, got string ("x")',
      'nope: no such file or folder (not found)',
    ]);
  });
});
