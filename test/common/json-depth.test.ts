/**
 * The nesting check both ends run on JSON text before parsing it: exact at the limit, blind to
 * brackets inside strings (escaped quotes included), and linear on a flat document.
 */
import { describe, expect, it } from 'vitest';
import { decodeBody } from '../../src/clients/http/body.js';
import { jsonNestsDeeperThan } from '../../src/common/json-depth.js';

const nested = (levels: number, open = '{"a":', close = '}') =>
  `${open.repeat(levels)}1${close.repeat(levels)}`;

describe('jsonNestsDeeperThan', () => {
  it('is exact at the limit, for objects, arrays and both mixed', () => {
    expect(jsonNestsDeeperThan(nested(10), 10)).toBe(false);
    expect(jsonNestsDeeperThan(nested(11), 10)).toBe(true);
    expect(jsonNestsDeeperThan(nested(11, '[', ']'), 10)).toBe(true);
    expect(jsonNestsDeeperThan(nested(6, '{"a":[', ']}'), 11)).toBe(true);
    expect(jsonNestsDeeperThan(nested(6, '{"a":[', ']}'), 12)).toBe(false);
  });

  it('counts depth, not how many collections there are side by side', () => {
    const wide = JSON.stringify(Array.from({ length: 5000 }, (_, i) => ({ id: i, tags: [[i]] })));
    // The list, an item, its tags, a tag: four levels, however many items.
    expect(jsonNestsDeeperThan(wide, 4)).toBe(false);
    expect(jsonNestsDeeperThan(wide, 3)).toBe(true);
  });

  it('skips brackets inside strings, escaped quotes and backslashes included', () => {
    const text = JSON.stringify({
      a: '[[[[[[[[[[{{{{{{{{{{',
      b: 'say \\"[[[[[[[[[[\\" \\\\',
      c: '\\\\"' + '['.repeat(20),
    });
    expect(JSON.parse(text)).toBeTruthy();
    expect(jsonNestsDeeperThan(text, 1)).toBe(false);
    // A quote after an even run of backslashes closes its string: the bracket after it counts.
    expect(jsonNestsDeeperThan(`{"a":"x\\\\","b":[[1]]}`, 2)).toBe(true);
  });

  it('leaves invalid JSON to the parser', () => {
    expect(jsonNestsDeeperThan(`{"a":"${'['.repeat(50)}`, 3)).toBe(false);
  });
});

describe('decodeBody', () => {
  const deep = `{"a":${'['.repeat(200)}${']'.repeat(200)}}`;
  it('refuses JSON nested deeper than 128 levels, under a JSON type or as text that is JSON', () => {
    const problem = { ok: false, problem: 'JSON in the response body nests deeper than 128 levels' };
    expect(decodeBody(deep, 'application/json')).toEqual(problem);
    // A state file comes as application/octet-stream, and is parsed and walked by its reader.
    expect(decodeBody(`  ${deep}`, 'application/octet-stream')).toEqual(problem);
  });

  it('leaves other text alone, and takes JSON within the limit', () => {
    const brackets = `log: ${'['.repeat(300)}`;
    expect(decodeBody(brackets, 'text/plain')).toEqual({ ok: true, value: brackets });
    const fine = `${'['.repeat(128)}${']'.repeat(128)}`;
    expect(decodeBody(fine, 'application/json').ok).toBe(true);
  });
});
