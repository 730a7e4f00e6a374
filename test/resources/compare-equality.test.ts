import { describe, expect, test } from 'vitest';
import { canonicalJson, deepEqual, diffValues } from '../../src/resources/compare.js';
import { childPath, pathParts } from '../../src/resources/diff-path.js';

// deepEqual compares plain data without building canonical JSON; it must still agree with it, or a
// plan would show a change the service never had (or hide one it had).
describe('deepEqual agrees with canonical JSON', () => {
  const cases: [string, unknown, unknown][] = [
    ['key order', { a: 1, b: { c: [1, 2], d: 'x' } }, { b: { d: 'x', c: [1, 2] }, a: 1 }],
    ['a key set to undefined is absent', { a: 1, b: undefined }, { a: 1 }],
    ['a missing key on one side', { a: 1, b: 2 }, { a: 1 }],
    ['an undefined key against a null one', { a: undefined }, { a: null }],
    ['undefined in a list is null', [undefined, 1], [null, 1]],
    ['list order matters', [1, 2], [2, 1]],
    ['list lengths differ', [1, 2], [1, 2, 3]],
    ['number against string', { a: 1 }, { a: '1' }],
    ['scalar against object', { a: 'x' }, { a: { x: 1 } }],
    ['list against object', { a: [] }, { a: {} }],
    ['NaN is null in JSON', { a: Number.NaN }, { a: null }],
    ['Dates compare as their JSON', { at: new Date(0) }, { at: '1970-01-01T00:00:00.000Z' }],
    ['nested difference deep down', { a: [{ b: [{ c: 1 }] }] }, { a: [{ b: [{ c: 2 }] }] }],
    ['null prototype objects', Object.assign(Object.create(null), { a: 1 }), { a: 1 }],
    ['top-level undefined', undefined, undefined],
    ['undefined against null', undefined, null],
  ];
  test.each(cases)('%s', (_name, a, b) => {
    const expected = canonicalJson(a) === canonicalJson(b);
    expect(deepEqual(a, b)).toBe(expected);
    expect(deepEqual(b, a)).toBe(expected);
  });

  test('an unchanged object gives no diff whatever its key order; a changed leaf gives one', () => {
    const desired = { Description: 'd', Policies: [{ Name: 'p' }], Meta: { a: '1', b: '2' } };
    expect(
      diffValues(desired, { Meta: { b: '2', a: '1' }, Policies: [{ Name: 'p' }], Description: 'd' }),
    ).toEqual([]);
    expect(diffValues(desired, { ...desired, Meta: { a: '1', b: '3' } })).toEqual([
      { path: 'Meta.b', op: 'change', before: '3', after: '2' },
    ]);
  });
});

// A user's own map keys may hold dots (`spring.datasource.url`) or brackets: joined with a dot they
// would read as nesting in every plan form, and a secret entry's name could not be told from its map.
describe('diff paths of keys that hold dots, brackets or quotes', () => {
  test('such a key is one quoted step of the path, which reads back as that key', () => {
    const diffs = diffValues(
      { Env: { 'spring.datasource.url': 'b', 'a]b': 'y', plain: 1 } },
      { Env: { 'spring.datasource.url': 'a', 'a]b': 'x', plain: 2 } },
    );
    expect(diffs.map((d) => d.path)).toEqual(['Env["a]b"]', 'Env.plain', 'Env["spring.datasource.url"]']);
    expect(pathParts('TaskGroups[web].Env["a]b"]')).toEqual([
      { type: 'name', name: 'TaskGroups' },
      { type: 'item', selector: 'web' },
      { type: 'name', name: 'Env' },
      { type: 'key', key: 'a]b' },
    ]);
    expect(pathParts(childPath('Meta', 'say "hi".now'))).toEqual([
      { type: 'name', name: 'Meta' },
      { type: 'key', key: 'say "hi".now' },
    ]);
  });
});
