/**
 * The fast first parse (js-yaml, no positions) against the position-keeping pipeline (yaml):
 * - per document, the fast path's values are exactly those yaml gives, and where it cannot be sure
 *   (hostile or unusual YAML) it declines, so the slow path reads the file;
 * - per load, a manifest read fast-first equals one read with positions throughout: the same
 *   resources, values, sources, positions found later and masked pointers, or the same problems.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultCatalog } from '../../src/engine/services.js';
import { fastParse, resolvePlain } from '../../src/manifest/fast-parse.js';
import { expandReferences, type InterpolationSources } from '../../src/manifest/interpolate.js';
import { LineIndex } from '../../src/manifest/line-index.js';
import { parseManifestText } from '../../src/manifest/parse.js';
import { prepareDocument } from '../../src/manifest/prepare.js';
import { documentToValue } from '../../src/manifest/to-value.js';
import {
  type LoadManifestOptions,
  loadManifest,
  type Manifest,
  ManifestError,
} from '../../src/manifest/index.js';
import { role, testKinds, testServices, writeTree } from './helpers.js';

/** Interpolation that always works, and shows what it replaced. */
const sources: InterpolationSources = {
  env: (name) => ({ value: `<env ${name}>` }),
  file: async (reference) => ({ ok: true, text: `<file ${reference}>` }),
};

/** What yaml's pipeline makes of each document: its value, start and interpolated values, or that something is wrong. */
async function slowDocuments(text: string) {
  const parsed = parseManifestText('f.yaml', text);
  const documents: { value: unknown; start: { line: number; col: number }; interpolated: string[] }[] = [];
  let problems = 0;
  for (const { doc, positions } of parsed.documents) {
    const prepared = await prepareDocument(doc, positions, sources);
    if (prepared.rejected || prepared.problems.length > 0) {
      problems++;
      continue;
    }
    const converted = documentToValue(doc, positions, prepared.firstAlias, {
      hasMergeKeys: prepared.hasMergeKeys,
    });
    if (!converted.ok) {
      problems++;
      continue;
    }
    const { line, col } = positions.documentStart();
    documents.push({
      value: converted.value,
      start: { line, col },
      interpolated: [...prepared.interpolatedPointers].sort(),
    });
  }
  problems += parsed.problems.length + (parsed.tooDeep() ? 1 : 0);
  return { documents, problems };
}

/** The fast path's documents with their starts, or undefined when it leaves the file to yaml. */
async function fastDocuments(text: string) {
  const documents = fastParse(text);
  if (!documents) return undefined;
  const lines = new LineIndex('f.yaml', text);
  const result = [];
  for (const d of documents) {
    const interpolated: string[] = [];
    for (const pending of d.interpolations) {
      const expansion = await expandReferences(pending.raw, sources);
      (pending.holder as Record<string | number, unknown>)[pending.key] = expansion.value;
      if (expansion.interpolated) interpolated.push(pending.pointer);
    }
    const { line, col } = lines.at(d.kindOffset);
    result.push({ value: d.value, start: { line, col }, interpolated: interpolated.sort() });
  }
  return result;
}

/**
 * Asserts the fast path agrees with yaml on `text`: same values and starts when it takes the file,
 * and it takes no file yaml finds a problem in (or a document yaml does not make a mapping of).
 * Returns whether the fast path took it.
 */
async function expectAgreement(text: string): Promise<boolean> {
  const slow = await slowDocuments(text);
  const fast = await fastDocuments(text);
  if (fast === undefined) return false;
  expect(slow.problems).toBe(0);
  expect(fast).toEqual(slow.documents);
  return true;
}

const K = 'apiVersion: converge/v1\nkind: TestRole\n';

describe('fast parse: values as yaml reads them', () => {
  it.each([
    [
      'numbers',
      `${K}v: [0777, 1e3, 1E-2, .inf, -.Inf, +.INF, .nan, 0x1F, 0o17, -0, +12, 1.0, 1., .5, 12e03, 0b11, 1_000, 0x-1, 1:20]\n`,
    ],
    [
      'nulls and booleans',
      `${K}v: [~, null, Null, NULL, nUll, true, True, TRUE, tRue, false, yes, no, on, off, y, n]\n`,
    ],
    ['empty values', `${K}a:\nb: ""\nc: ''\nd: []\ne: {}\nf: [a, b, ]\n`],
    [
      'interpolations',
      `${K}a: \${env:A}\nb: [x, "\${file:f.txt} and \${env:B}", {c: "$\${env:C}"}]\n"d/e~f": \${env:D}\n`,
    ],
    [
      'timestamps and versions stay strings or floats',
      `${K}t: 2001-12-14t21:59:43.10-05:00\nd: 2002-12-14\nv: 1.10\n`,
    ],
    [
      'quoted scalars',
      `${K}a: "x\\ty \\u00e9 \\x41 \\"q\\""\nb: 'it''s # not a comment'\nc: "multi\n  line"\nd: '0777'\n`,
    ],
    ['plain multi-line scalars', `${K}a: one\n  two\n\n  three\nb: x # comment\nc: a#b\n`],
    [
      'block scalars',
      `${K}a: |\n  keep\n   indented\n\nb: >\n  folded\n  text\n\n  para\nc: |-\n  strip\nd: |+\n  keep\n\ne: >2\n   explicit\n`,
    ],
    ['flow collections', `${K}a: {x: 1, y: [a, {b: c}], "z": 'w'}\nb: [ [1, 2], {}, [] ]\nc: {? k : v}\n`],
    ['explicit keys', `${K}? a\n: 1\n? "b"\n: [x]\n`],
    ['keys that look like other things but are quoted', `${K}s: {"1": a, 'true': b, "null": c, "~": d}\n`],
    ['unicode', `${K}name: "café ☕"\nemoji: 😀\n`],
    ['comments everywhere', `# head\n${K}# between\nmetadata: # trailing\n  name: a # more\n# tail\n`],
    [
      'CRLF line ends',
      `${K}a: 1\r\nb:\r\n  - x\r\n  - y\r\nc: |\r\n  text\r\n`.replace(/\n/g, '\r\n').replace(/\r\r/g, '\r'),
    ],
    ['multi-document', `${K}a: 1\n---\n${K}b: 2\n...\n---\n${K}c: 3\n`],
    ['empty documents', `---\n---\n${K}a: 1\n---\n# only a comment\n---\n~\n...\n`],
    ['document start markers with content', `--- \n${K}a: 1\n`],
    ['quoted kind key', `apiVersion: v\n"kind": TestRole\n---\n  'kind': x\n`],
    ['flow mapping document', `{kind: TestRole, a: [1, 2]}\n`],
    ['tabs after values', `${K}a: b\t\nc:\t d\n`],
    ['a flow sequence over lines', `${K}a: [b\n c]\nd:\n- e\n- f\n`],
    ['flow edge cases', `${K}a: {b: c,}\nd: [e: f]\ng: [? h : i]\n`],
    ['block scalar indicators', `${K}a: >-\n\n  x\nb: |2-\n    y\n`],
    ['plain scalars with indicator characters inside', `${K}a: x:y\nb: -x\nc: ?x\nd: :x\ne: a#b\n`],
    ['a document end followed by a comment', `${K}a: 1 # c\n...\n# after\n`],
    ['a long key under the limit', `${K}${'k'.repeat(900)}: 1\n`],
  ])('%s', async (_name, text) => {
    expect(await expectAgreement(text)).toBe(true);
  });

  it('reads plain scalars with the core schema rules', () => {
    expect(resolvePlain('0777')).toBe(777);
    expect(resolvePlain('0x1F')).toBe(31);
    expect(resolvePlain('1e3')).toBe(1000);
    expect(resolvePlain('yes')).toBe('yes');
    expect(resolvePlain('-.inf')).toBe(Number.NEGATIVE_INFINITY);
    expect(resolvePlain('')).toBeNull();
  });
});

describe('fast parse: what it leaves to the position-keeping parse', () => {
  it.each([
    ['duplicate keys', `${K}a: 1\na: 2\n`],
    ['duplicate keys in a flow map', `${K}a: {x: 1, x: 2}\n`],
    ['__proto__', `${K}__proto__: {polluted: true}\n`],
    ['quoted __proto__', `${K}spec: {"__proto__": {a: 1}}\n`],
    ['constructor and prototype', `${K}constructor: 1\n---\n${K}prototype: 1\n`],
    ['anchors and aliases', `${K}a: &x {b: 1}\nc: *x\n`],
    ['an alias bomb', `${K}a: &a [x, x]\nb: &b [*a, *a]\nc: &c [*b, *b]\nd: [*c, *c]\n`],
    ['a merge key', `${K}base: &b {x: 1}\nm:\n  <<: *b\n  y: 2\n`],
    ['a quoted merge key', `${K}m: {"<<": 1}\n`],
    ['an allowed tag', `${K}a: !!str 1\n`],
    ['a custom tag', `${K}a: !!js/function 'function(){}'\n`],
    ['a local tag', `${K}a: !thing x\n`],
    ['a YAML directive', `%YAML 1.1\n---\n${K}a: yes\n`],
    ['a TAG directive', `%TAG !e! tag:example.com,2000:\n---\n${K}a: !e!x 1\n`],
    ['a byte order mark', `\uFEFF${K}a: 1\n`],
    ['a byte order mark inside', `${K}a: "x"\n---\n\uFEFF${K}`],
    ['numeric keys', `${K}1: a\n`],
    ['boolean keys', `${K}true: a\n`],
    ['null keys', `${K}~: a\n---\n${K}? \n: b\n`],
    ['float keys', `${K}1.5: a\n`],
    ['collection keys', `${K}? [a, b]\n: c\n---\n${K}{a: 1}: b\n`],
    ['a document that is a list', `- a\n- b\n`],
    ['a document that is a string', `just text\n`],
    ['a mapping without kind', `apiVersion: v\nmetadata: {}\n`],
    ['a block scalar kind key', `apiVersion: v\n? |\n  kind\n: TestRole\n`],
    ['syntax errors', `${K}a: [1, 2\n`],
    ['an empty flow entry', `${K}a: [a, , b]\n`],
    ['a comment not separated by a space', `${K}a: "q"#c\n---\n${K}a: [b]#c\n`],
    ['a flow mapping entry without a value', `${K}a: {b}\n`],
    ['an implicit key over 1024 characters', `${K}${'k'.repeat(1100)}: 1\n`],
    ['an implicit key far from its colon', `${K}k${' '.repeat(1100)}: 1\n`],
    ['a nested compact mapping', `${K}a: b: c\n`],
    ['reserved characters', `${K}a: @b\n---\n${K}a: \`b\n`],
    ['a multi-line implicit key', `${K}multi\n line: 1\n`],
    ['text after a quoted scalar', `${K}a: "a"b\n`],
    ['a block scalar less indented', `${K}a: |\n  x\n y\n`],
    ['a sequence beside a mapping', `${K}- a\n`],
    ['a bare tag', `${K}a: !\n`],
    ['content on the document start line', `${K}--- a: 1\n`],
    ['bad indentation', `${K}a:\n  b: 1\n c: 2\n`],
    ['an unterminated quote', `${K}a: "open\n`],
    ['a bad escape', `${K}a: "\\q"\n`],
    ['a tab as indentation', `${K}a:\n\tb: 1\n`],
    ['deep flow nesting', `${K}a: ${'['.repeat(40)}${']'.repeat(40)}\n`],
    ['very deep flow nesting', `${K}a: ${'['.repeat(5000)}${']'.repeat(5000)}\n`],
    [
      'deep block nesting',
      `${K}${Array.from({ length: 40 }, (_, i) => `${'  '.repeat(i)}k${i}:`).join('\n')} x\n`,
    ],
  ])('%s', async (_name, text) => {
    expect(await expectAgreement(text)).toBe(false);
  });

  it('takes nesting up to its limit and agrees with yaml there', async () => {
    expect(await expectAgreement(`${K}a: ${'['.repeat(30)}1${']'.repeat(30)}\n`)).toBe(true);
    const block = Array.from({ length: 30 }, (_, i) => `${'  '.repeat(i)}k${i}:`).join('\n');
    expect(await expectAgreement(`${K}${block} x\n`)).toBe(true);
  });

  it('reads a large file in runs of documents as yaml reads it whole', async () => {
    const many = (n: number, extra = '') =>
      Array.from({ length: n }, (_, i) => `${K}metadata: {name: r${i}}\ntext: |\n  line ${i}\n${extra}`).join(
        '---\n',
      );
    // Over 64 KB: cut at document markers, with `---` lines that are not markers (`---x`) on the way.
    expect(await expectAgreement(many(3000, '---x: 1\n'))).toBe(true);
    expect(await expectAgreement(many(3000))).toBe(true);
    expect(await expectAgreement(`${many(3000)}---\n${K}a: "quoted\n--- inside"\n`)).toBe(false);
    expect(await expectAgreement(`${many(1500)}---\n${K}a: "quoted\n--- inside"\n---\n${many(1500)}`)).toBe(
      false,
    );
    expect(await expectAgreement(many(3000).replace(/\n/g, '\r\n'))).toBe(true);
  });

  it('takes the example manifests', async () => {
    const folder = path.resolve(import.meta.dirname, '../../examples/demo');
    for (const name of readdirSync(folder).filter((n) => n.endsWith('.yaml'))) {
      expect(await expectAgreement(readFileSync(path.join(folder, name), 'utf8')), name).toBe(true);
    }
  });
});

/** A load as the user sees it: the manifest's content and positions, or the problems printed. */
async function outcome(dir: string, paths: string[], options: Partial<LoadManifestOptions>) {
  try {
    const manifest = await loadManifest(paths, {
      kinds: testKinds,
      services: testServices,
      env: { CONVERGE_ALLOW_ENV: 'TOKEN', TOKEN: 's3cret' },
      cwd: dir,
      ...options,
    });
    return { manifest: comparable(manifest) };
  } catch (error) {
    if (!(error instanceof ManifestError)) throw error;
    return { problems: error.message };
  }
}

function comparable(manifest: Manifest) {
  return {
    files: manifest.files,
    connections: manifest.connections,
    pruneScopes: manifest.pruneScopes,
    resources: manifest.resources.map(({ locate, readFile: _readFile, sensitivePointers, ...resource }) => ({
      ...resource,
      sensitivePointers: [...sensitivePointers].sort(),
      // Positions asked for after loading (a plan's problems) come from the file parsed again.
      located: [
        '',
        '/kind',
        '/metadata/name',
        '/spec',
        '/spec/Description',
        '/spec/Policies/1/Name',
        '/spec/Token',
        '/nope',
      ].map((pointer) => locate(pointer)),
    })),
  };
}

async function expectSameLoad(files: Record<string, string>, options: Partial<LoadManifestOptions> = {}) {
  const dir = writeTree(files);
  const paths = Object.keys(files);
  const fastFirst = await outcome(dir, paths, options);
  const withPositions = await outcome(dir, paths, { ...options, alwaysKeepPositions: true });
  expect(fastFirst).toEqual(withPositions);
  return fastFirst;
}

const connection = `apiVersion: converge/v1\nkind: Connection\nmetadata:\n  name: other\nspec:\n  service: workspaces\n  address: http://127.0.0.1:1\n  organization: acme\n  token: \${env:TOKEN}\n`;

describe('loading fast-first gives what loading with positions gives', () => {
  it.each([
    [
      'valid roles in several documents',
      { 'a.yaml': `${role('a')}---\n${role('b', '  Policies: [{Name: x}, {Name: y}]\n')}` },
    ],
    [
      'a connection with an interpolated token and a resource that uses it',
      {
        'a.yaml': `${connection}---\n${role('a', '  Token: "${env:TOKEN}"\n')}`.replace(
          '  name: a\n',
          '  name: a\n  connection: other\n',
        ),
      },
    ],
    [
      'a prune scope',
      {
        'a.yaml': `apiVersion: converge/v1\nkind: PruneScope\nmetadata: {name: roles}\nspec: {kind: TestRole, namePrefix: app-}\n---\n${role('app-a')}`,
      },
    ],
    ['schema problems', { 'a.yaml': `${role('a', '  Level: -1\n  Extra: 1\n')}---\n${role('Bad')}` }],
    ['a secret in a bad value stays masked', { 'a.yaml': role('a', '  Level: ${env:TOKEN}\n') }],
    ['an interpolation that is not allowed', { 'a.yaml': role('a', '  Token: ${env:HOME}\n') }],
    ['an interpolated file outside the root', { 'a.yaml': role('a', '  Token: ${file:/etc/passwd}\n') }],
    ['a resource declared twice across files', { 'a.yaml': role('a'), 'b.yaml': `# x\n\n${role('a')}` }],
    [
      'a reference to a missing connection',
      { 'a.yaml': role('a').replace('  name: a\n', '  name: a\n  connection: nope\n') },
    ],
    ['one good file and one hostile file', { 'a.yaml': role('a'), 'b.yaml': `${role('b')}__proto__: 1\n` }],
    ['duplicates', { 'a.yaml': `${role('a')}spec: {}\n` }],
    ['an alias bomb', { 'a.yaml': `${role('a')}x: &a [1, 1]\ny: &b [*a, *a]\nz: [*b, *b]\n` }],
    [
      'merge keys',
      {
        'a.yaml': `base: &b {Description: merged}\n${role('a').replace('  Description: role a\n', '  <<: *b\n')}`,
      },
    ],
    ['tags', { 'a.yaml': role('a', '  Mode: !!js/undefined x\n') }],
    ['syntax errors after good documents', { 'a.yaml': `${role('a')}---\n${role('b')}  Policies: [\n` }],
    ['deep nesting', { 'a.yaml': `${role('a')}x: ${'['.repeat(100)}${']'.repeat(100)}\n` }],
    ['a non-mapping document', { 'a.yaml': `${role('a')}---\n- just\n- a list\n` }],
    ['CRLF', { 'a.yaml': `${role('a')}---\n${role('b')}`.replace(/\n/g, '\r\n') }],
    ['a BOM', { 'a.yaml': `\uFEFF${role('a')}` }],
    [
      'values the schema refuses',
      { 'a.yaml': role('a', '  Level: 0777\n  Mode: yes\n  Policies: [{Name: ~}]\n') },
    ],
  ])('%s', async (_name, files) => {
    await expectSameLoad(files as Record<string, string>);
  });

  it('takes the fast path for a plain valid file and still gives later positions and masking', async () => {
    const text = `${connection}---\n${role('a', '  Token: "${env:TOKEN}"\n  Policies: [{Name: x}, {Name: y}]\n')}`;
    expect(fastParse(text)).toBeDefined();
    const result = await expectSameLoad({ 'a.yaml': text });
    const [resource] = result.manifest!.resources;
    expect(resource!.sensitivePointers).toEqual(['/spec/Token']);
    expect(resource!.spec).toMatchObject({ Token: 's3cret' });
    expect(resource!.located[5]).toEqual({ file: 'a.yaml', line: 18, col: 32 });
    expect(result.manifest!.connections[0]).toMatchObject({ token: 's3cret', tokenFromOutside: true });
  });
});

describe('the example manifests load the same both ways', () => {
  it('examples/demo with the shipped kinds', async () => {
    const folder = path.resolve(import.meta.dirname, '../../examples/demo');
    const options = {
      kinds: defaultCatalog.kinds,
      services: defaultCatalog.manifestServices,
      env: {},
      cwd: folder,
    };
    const load = async (alwaysKeepPositions: boolean) => {
      try {
        return comparable(await loadManifest(['.'], { ...options, alwaysKeepPositions }));
      } catch (error) {
        return String(error);
      }
    };
    expect(await load(false)).toEqual(await load(true));
  });
});
