/**
 * Input meant to crash, hang or subvert the loader must produce a clear error, quickly.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { findExcessiveNesting } from '../../src/manifest/nesting.js';
import { load, loadErrors, role, writeTree } from './helpers.js';

const head = 'apiVersion: converge/v1\nkind: TestRole\nmetadata: { name: a }\n';

describe('resource exhaustion', () => {
  test('a YAML alias bomb ("billion laughs") is refused', async () => {
    const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (const name of 'bcdefghi') {
      const prev = String.fromCharCode(name.charCodeAt(0) - 1);
      levels.push(`${name}: &${name} [${Array(9).fill(`*${prev}`).join(',')}]`);
    }
    const dir = writeTree({ 'bomb.yaml': `${head}spec:\n  Description: x\n  ${levels.join('\n  ')}\n` });
    expect(await loadErrors(dir, ['bomb.yaml'])).toEqual([
      'bomb.yaml:7:10: aliases expand to too much data (more than 100 times the anchored values); is this a YAML "billion laughs" bomb?',
    ]);
  });

  test('an alias inside its own anchor (a cycle) is refused', async () => {
    const dir = writeTree({ 'a.yaml': `${head}spec: &spec\n  Description: x\n  Policies: [*spec]\n` });
    expect(await loadErrors(dir, ['a.yaml'])).toEqual([
      'a.yaml:6:14: alias *spec refers to a value that contains it, which would make a cycle',
    ]);
  });

  test('a 50 MB file is refused without being read', { timeout: 10_000 }, async () => {
    const dir = writeTree({});
    const file = path.join(dir, 'huge.yaml');
    // A sparse file: 50 MB on paper, nothing on disk. Reading it would take a while; stat does not.
    fs.writeFileSync(file, '');
    fs.truncateSync(file, 50 * 1024 * 1024);
    const started = Date.now();
    expect(await loadErrors(dir, ['huge.yaml'])).toEqual(['huge.yaml: file is 50 MiB, over the 5 MiB limit']);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  test.each([
    ['100k [', '['.repeat(100_000), 'deep.yaml:1:65'],
    ['100k [ inside a document', `${head}spec:\n  Description: ${'['.repeat(100_000)}`, 'deep.yaml:5:78'],
    ['100k {a: ', `${head}spec: ${'{a: '.repeat(100_000)}`, 'deep.yaml:4:259'],
    ['100k block sequence indicators', '- '.repeat(100_000), 'deep.yaml:1:129'],
    [
      'deeply indented mappings',
      Array.from({ length: 200 }, (_, i) => `${' '.repeat(i)}k${i}:`).join('\n'),
      'deep.yaml:65:68',
    ],
  ])('nesting: %s', { timeout: 10_000 }, async (_name, text, where) => {
    const dir = writeTree({ 'deep.yaml': text });
    const lines = await loadErrors(dir, ['deep.yaml']);
    expect(lines).toEqual([
      `${where}: values are nested more than 64 levels deep; the file is not read further`,
    ]);
  });

  test('nesting through aliases is measured after expansion', async () => {
    // Each anchor nests the previous one 40 levels deeper: fine as text, too deep once expanded.
    const deep = (inner: string) => `${'['.repeat(40)}${inner}${']'.repeat(40)}`;
    const dir = writeTree({
      'a.yaml': `${head}spec:\n  Description: x\n  one: &one ${deep('1')}\n  two: ${deep('*one')}\n`,
    });
    expect(await loadErrors(dir, ['a.yaml'])).toEqual([
      'a.yaml:7:48: values are nested more than 64 levels deep once aliases are expanded',
    ]);
  });

  test('moderate real-world nesting is accepted', async () => {
    const nested = `${'['.repeat(30)}${']'.repeat(30)}`;
    const dir = writeTree({ 'a.yaml': role('a', `  Policies:\n    - Name: x\n  Token: "${nested}"\n`) });
    await expect(load(dir, ['a.yaml'])).resolves.toBeDefined();
  });

  test('a map with 100k keys gets its error instead of hanging', { timeout: 20_000 }, async () => {
    // yaml's own duplicate-key check is quadratic (minutes for this file, a hang to the user); ours
    // uses a Set. The timeout is a hang guard, not a measurement: timings live in `npm run bench`.
    const keys = Array.from({ length: 100_000 }, (_, i) => `    k${i}: v`).join('\n');
    const dir = writeTree({
      'a.yaml': `${role('a', `  Policies:\n  - Name: x\n`)}  Token: x\nextra:\n${keys}\n`,
    });
    const lines = await loadErrors(dir, ['a.yaml']);
    expect(lines).toEqual(['a.yaml:10:1: unknown field "extra" (allowed: apiVersion, kind, metadata, spec)']);
  });
});

describe('resource exhaustion through references and document counts', () => {
  test('one value repeating a large file is refused at its reference, not held in memory', async () => {
    const mib = 'x'.repeat(1024 * 1024 - 1) + '\n';
    const dir = writeTree({
      'big.txt': mib,
      'a.yaml': role('a', `  Token: "${'${file:big.txt}'.repeat(400)}"\n`),
    });
    const lines = await loadErrors(dir, ['a.yaml']);
    expect(lines.some((l) => /^a\.yaml:7:\d+: .*more than 16 MiB in all/.test(l))).toBe(true);
  });

  test('references in a file read again for positions are counted once', async () => {
    const big = 'z'.repeat(900 * 1024) + '\n';
    // Ten references of 900 KB (under 16 MiB), and a typo in another document, which makes the
    // loader read the file again keeping positions.
    const docs = Array.from(
      { length: 10 },
      (_, i) =>
        `apiVersion: converge/v1\nkind: TestRole\nmetadata: { name: r${i} }\nspec:\n  Description: x\n  Token: "\${file:big.txt}"\n`,
    );
    docs.push(
      'apiVersion: converge/v1\nkind: TestRole\nmetadata: { name: typo }\nspec:\n  Descriptionn: x\n',
    );
    const dir = writeTree({ 'big.txt': big, 'a.yaml': docs.join('---\n') });
    // The typo's own problems, and nothing about the references' total.
    expect(await loadErrors(dir, ['a.yaml'])).toEqual([
      'a.yaml:74:1: missing required field "Description" in spec',
      'a.yaml:75:3: unknown field "Descriptionn" in spec; did you mean "Description"?',
    ]);
  });

  test('aliases that copy what references filled in are counted as the object will be sent', async () => {
    const big = 'q'.repeat(1024 * 1024 - 1) + '\n';
    // One reference (1 MiB, under every limit of references), copied by twelve aliases.
    const aliases = Array.from({ length: 12 }, () => '*b').join(', ');
    const dir = writeTree({
      'big.txt': big,
      'a.yaml': `apiVersion: converge/v1\nkind: TestJob\nmetadata: { name: a }\nspec:\n  Payload: &b "\${file:big.txt}"\n  Datacenters: [${aliases}]\n`,
    });
    const lines = await loadErrors(dir, ['a.yaml']);
    expect(lines).toContain(
      'a.yaml:2:1: the document holds more than 8 MiB of text once its references are filled in and its aliases expanded (each alias copies what it names); no service takes an object that large',
    );
  });

  test('a file objects name is counted once per object: reading it again (a second plan) adds nothing', async () => {
    const big = 'f'.repeat(25 * 1024 * 1024);
    const dir = writeTree({ 'big.txt': big, 'a.yaml': [role('a'), role('b'), role('c')].join('---\n') });
    const manifest = await load(dir, ['a.yaml']);
    // Three objects read it (two copies, 50 MiB), then read it again as a later plan of the same
    // manifest would: still under the 64 MiB of copies.
    for (let round = 0; round < 2; round++)
      for (const resource of manifest.resources) {
        const read = await resource.readFile('big.txt', 64 * 1024 * 1024);
        expect(read.ok, JSON.stringify(read.ok ? 'ok' : read)).toBe(true);
      }
  });

  test('a value over 1 MiB once its references are filled in is refused', async () => {
    const half = 'y'.repeat(700 * 1024) + '\n';
    const dir = writeTree({
      'half.txt': half,
      'a.yaml': role('a', '  Token: "${file:half.txt}${file:half.txt}"\n'),
    });
    expect(await loadErrors(dir, ['a.yaml'])).toEqual([
      expect.stringMatching(
        /^a\.yaml:7:\d+: the value is 1\.4 MiB once its references are filled in; a value may hold at most 1 MiB$/,
      ),
    ]);
  });

  test('the 1 MiB of a value counts UTF-8 bytes, as the message says, not characters', async () => {
    // 250,000 characters of CJK text are 750 KB in UTF-8 (3 bytes each): two of them make 1.5 MB,
    // though only 500,000 characters.
    const cjk = '漢'.repeat(250_000);
    const dir = writeTree({
      'cjk.txt': cjk,
      'a.yaml': role('a', '  Token: "${file:cjk.txt}${file:cjk.txt}"\n'),
    });
    expect(await loadErrors(dir, ['a.yaml'])).toEqual([
      expect.stringMatching(
        /^a\.yaml:7:\d+: the value is 1\.4 MiB once its references are filled in; a value may hold at most 1 MiB$/,
      ),
    ]);
  });

  test('a value just over 1 MiB says by how much, not "1.0 MiB … at most 1 MiB"', async () => {
    const dir = writeTree({
      'a.txt': 'a'.repeat(600_000),
      'b.txt': 'b'.repeat(1024 * 1024 - 600_000 + 1),
      'a.yaml': role('a', '  Token: "${file:a.txt}${file:b.txt}"\n'),
    });
    expect(await loadErrors(dir, ['a.yaml'])).toEqual([
      expect.stringMatching(
        /^a\.yaml:7:\d+: the value is 1048577 bytes \(1 over\) once its references are filled in; a value may hold at most 1 MiB$/,
      ),
    ]);
  });

  test('the 16 MiB all references may fill in counts UTF-8 bytes too', async () => {
    // Thirty documents each filling in 750 KB of CJK text: 22 MB in UTF-8, 7.5 million characters.
    const docs = Array.from(
      { length: 30 },
      (_, i) =>
        `apiVersion: converge/v1\nkind: TestRole\nmetadata: { name: r${i} }\nspec:\n  Description: x\n  Token: "\${file:cjk.txt}"\n`,
    );
    const dir = writeTree({ 'cjk.txt': '漢'.repeat(250_000), 'a.yaml': docs.join('---\n') });
    const lines = await loadErrors(dir, ['a.yaml']);
    expect(lines.some((l) => /^a\.yaml:\d+:\d+: .*more than 16 MiB in all/.test(l))).toBe(true);
  });

  test(
    '150,000 documents in one file are each reported, the first 200 shown, without overflowing the stack',
    { timeout: 30_000 },
    async () => {
      const dir = writeTree({ 'many.yaml': '---\n{}\n'.repeat(150_000) });
      const lines = await loadErrors(dir, ['many.yaml']);
      expect(lines).toHaveLength(201);
      expect(lines[0]).toMatch(/^many\.yaml:2:1: not a Converge manifest document/);
      expect(lines[200]).toBe('… and 149800 more problems, not shown; fix these first');
    },
  );
});

describe('prototype pollution', () => {
  afterEach(() => {
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
  });

  test.each([
    [
      '__proto__ at the top',
      `${head}spec: { Description: x }\n__proto__: { polluted: yes }\n`,
      'a.yaml:5:1',
      '__proto__',
    ],
    [
      '__proto__ in spec',
      `${head}spec:\n  Description: x\n  __proto__:\n    polluted: yes\n`,
      'a.yaml:6:3',
      '__proto__',
    ],
    [
      'quoted __proto__ in a list item',
      `${head}spec:\n  Description: x\n  Policies:\n    - "__proto__": { polluted: 1 }\n`,
      'a.yaml:7:7',
      '__proto__',
    ],
    [
      'constructor',
      `${head}spec:\n  Description: x\n  constructor: { prototype: { polluted: 1 } }\n`,
      'a.yaml:6:3',
      'constructor',
    ],
    [
      'prototype in labels',
      'apiVersion: converge/v1\nkind: TestRole\nmetadata:\n  name: a\n  labels: { prototype: x }\nspec: { Description: x }\n',
      'a.yaml:5:13',
      'prototype',
    ],
  ])('%s', async (_name, text, where, key) => {
    const dir = writeTree({ 'a.yaml': text });
    expect(await loadErrors(dir, ['a.yaml'])).toEqual([
      `${where}: key "${key}" is not allowed: it could change object prototypes`,
    ]);
  });
});

describe('not YAML text', () => {
  test('binary garbage with NUL bytes', async () => {
    const dir = writeTree({
      'a.yaml': Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x01, 0x00, 0x00, 0x00]),
    });
    expect(await loadErrors(dir, ['a.yaml'])).toEqual([
      'a.yaml: file is not a text file (NUL bytes or invalid UTF-8)',
    ]);
  });

  test('invalid UTF-8', async () => {
    const dir = writeTree({
      'a.yaml': Buffer.concat([Buffer.from('kind: '), Buffer.from([0xc3, 0x28, 0xff])]),
    });
    expect(await loadErrors(dir, ['a.yaml'])).toEqual([
      'a.yaml: file is not a text file (NUL bytes or invalid UTF-8)',
    ]);
  });

  test('a UTF-8 byte order mark is fine', async () => {
    const dir = writeTree({ 'a.yaml': `\uFEFF${role('a')}` });
    await expect(load(dir, ['a.yaml'])).resolves.toMatchObject({ resources: [{ name: 'a' }] });
  });

  test('YAML syntax errors are reported with yaml’s message and position', async () => {
    const dir = writeTree({
      'a.yaml': `${role('a')}---\n${head}spec:\n  Description: [unclosed\n  Level: 2\n---\n${role('b')}`,
    });
    const lines = await loadErrors(dir, ['a.yaml']);
    expect(lines).toEqual([
      'a.yaml:13:3: YAML: Flow sequence in block collection must be sufficiently indented and end with a ]',
    ]);
  });

  test('an unclosed quote is reported where it opens, not where the file ends', async () => {
    // The unclosed value swallows the rest of the file, later documents too: yaml reports the end.
    const dir = writeTree({
      'a.yaml': `${head}spec:\n  Description: "unclosed\n  Level: 2\n---\n${role('b')}`,
      'b.yaml': `${head}spec:\n  'Description: x\n`,
    });
    expect(await loadErrors(dir, ['a.yaml', 'b.yaml'])).toEqual([
      'a.yaml:5:16: YAML: the quoted text that starts here is never closed: it runs on to the end of the file (add its closing ")',
      "b.yaml:5:3: YAML: the quoted text that starts here is never closed: it runs on to the end of the file (add its closing ')",
    ]);
  });

  test('a plain value holding ": " says to quote it', async () => {
    const dir = writeTree({ 'a.yaml': `${head}spec:\n  Description: Team: 0\n` });
    const lines = await loadErrors(dir, ['a.yaml']);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^a\.yaml:5:16: YAML: Nested mappings are not allowed in compact mappings \(a value that holds ": " must be quoted: Description: "Team: 0"\)$/,
    );
  });

  test('tabs for indentation', async () => {
    const dir = writeTree({ 'a.yaml': `${head}spec:\n\tDescription: x\n` });
    const [line] = await loadErrors(dir, ['a.yaml']);
    expect(line).toMatch(/^a\.yaml:5:1: YAML: .*[Tt]ab/);
  });

  test('duplicate keys', async () => {
    const dir = writeTree({ 'a.yaml': `${head}spec:\n  Description: x\n  Level: 1\n  Level: 2\n` });
    expect(await loadErrors(dir, ['a.yaml'])).toEqual([
      'a.yaml:7:3: duplicate key "Level" (first defined on line 6)',
    ]);
  });

  test.each([
    ['!!js/function', '!!js/function "function () {}"', 'a.yaml:5:30: tag !!js/function is not allowed'],
    ['a local tag', '!shell ls', 'a.yaml:5:23: tag !shell is not allowed'],
    ['a YAML 1.1 tag', '!!binary aGVsbG8=', 'a.yaml:5:25: tag !!binary is not allowed'],
    [
      'a tag on a key',
      'x\n  !!python/name:os.system Level: 1',
      'a.yaml:6:27: tag !!python/name:os.system is not allowed',
    ],
  ])('custom tags are refused (the position is the tagged value): %s', async (_name, value, expected) => {
    const dir = writeTree({ 'a.yaml': `${head}spec:\n  Description: ${value}\n` });
    const lines = await loadErrors(dir, ['a.yaml']);
    expect(lines).toEqual([`${expected}: manifests hold plain YAML values only`]);
  });

  test('core-schema tags are fine', async () => {
    const dir = writeTree({ 'a.yaml': `${head}spec:\n  Description: !!str 123\n  Level: !!int "4"\n` });
    await expect(load(dir, ['a.yaml'])).resolves.toMatchObject({
      resources: [{ spec: { Description: '123', Level: 4 } }],
    });
  });

  test('non-string keys are refused', async () => {
    const dir = writeTree({ 'a.yaml': `${head}spec:\n  Description: x\n  ? [a, b]\n  : c\n` });
    expect(await loadErrors(dir, ['a.yaml'])).toEqual([
      'a.yaml:6:5: keys must be plain strings (not empty, not collections or aliases)',
    ]);
  });

  test('quote-sensitive scalars follow YAML 1.2 core, even under a %YAML 1.1 directive', async () => {
    const dir = writeTree({
      'a.yaml': `%YAML 1.1\n---\napiVersion: converge/v1\nkind: TestJob\nmetadata: { name: j }\nspec:\n  Datacenters: [yes, no, on, off, 0777, "1.10"]\n  Payload: "1.10"\n`,
    });
    const lines = await loadErrors(dir, ['a.yaml']);
    // yes/no/on/off stay strings; 0777 is the number 777 (so not a string); a quoted 1.10 stays "1.10".
    expect(lines).toEqual(['a.yaml:7:35: spec.Datacenters[4] must be string, got number (777)']);
  });
});

describe('findExcessiveNesting', () => {
  test('ignores brackets inside strings, comments and block scalars', () => {
    const brackets = '['.repeat(500);
    const text = `a: "${brackets}"\nb: '${brackets}'\n# ${brackets}\nc: |\n  ${brackets}\nd: x${brackets}\n`;
    expect(findExcessiveNesting(text, 64)).toBeUndefined();
  });

  test('sibling keys and list items do not add up', () => {
    const text = Array.from({ length: 1000 }, (_, i) => `k${i}:\n  - a: 1\n    b: [1, {c: 2}]\n`).join('');
    expect(findExcessiveNesting(text, 8)).toBeUndefined();
  });

  test('each document starts from zero', () => {
    const doc = `${'['.repeat(40)}${']'.repeat(40)}\n`;
    expect(findExcessiveNesting(`${doc}---\n${doc}---\n${doc}`, 64)).toBeUndefined();
  });
});
