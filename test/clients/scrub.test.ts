/** The one scrubber: every encoding an echoing service may use, at any position, before any cut. */
import { describe, expect, it } from 'vitest';
import { REDACTED, scrubAndTruncate, scrubSecrets } from '../../src/clients/http/scrub.js';
import { echoForms, leaks, pieces } from '../support/hostile.js';

const SECRET = 'pa"ss\\wörd </x> & 9f3c-17ab';

describe('scrubSecrets', () => {
  it.each(Object.entries(echoForms(SECRET)))('removes the %s form wherever it sits', (_name, form) => {
    for (const text of [form, `before ${form}`, `${form} after`, `a${form}b`]) {
      const out = scrubSecrets(text, [SECRET]);
      expect(out).toContain(REDACTED);
      expect(leaks(out, SECRET)).toEqual([]);
    }
  });

  it("removes Go's JSON escaping (\\u003c, non-ASCII) and percent escapes in lower case", () => {
    const go = JSON.stringify(SECRET)
      .slice(1, -1)
      .replace(/[<>&\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
    const lowerPercent = encodeURIComponent(SECRET).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase());
    const upperHex = go.replace(/\\u[0-9a-f]{4}/g, (m) => `\\u${m.slice(2).toUpperCase()}`);
    for (const form of [go, upperHex, lowerPercent]) {
      expect(scrubSecrets(`x ${form} y`, [SECRET])).toBe(`x ${REDACTED} y`);
    }
  });

  it('replaces a whole base64 run that holds the secret at any of the three byte alignments', () => {
    for (const prefix of ['', 'a', 'ab', 'abc', '{"password":"']) {
      for (const alphabet of ['base64', 'base64url'] as const) {
        const run = Buffer.from(`${prefix}${SECRET}" and more text after it`).toString(alphabet);
        const out = scrubSecrets(`echo: ${run} (end)`, [SECRET]);
        expect(out).toBe(`echo: ${REDACTED} (end)`);
      }
    }
    // The request body as the service saw it, JSON-escaped, then base64: the same.
    const body = Buffer.from(JSON.stringify({ bindpass: SECRET })).toString('base64');
    expect(scrubSecrets(body, [SECRET])).toBe(REDACTED);
  });

  it('leaves other text and other base64 alone, and very short values too', () => {
    const other = Buffer.from('nothing to see here').toString('base64');
    expect(scrubSecrets(`ok ${other} done`, [SECRET])).toBe(`ok ${other} done`);
    expect(scrubSecrets('a b c', ['a', undefined])).toBe('a b c');
  });
});

describe('scrubAndTruncate', () => {
  it('scrubs before cutting, so no part of a secret that straddles the cut is shown', () => {
    const token = 'tok-7c1e9a2b44d0f6e8';
    for (const at of [490, 496, 499, 2000 - token.length]) {
      const text = `${'x'.repeat(at)}${token}${'y'.repeat(Math.max(0, 2000 - at - token.length))}`;
      expect(pieces(scrubAndTruncate(text, [token]), token)).toEqual([]);
    }
  });
});
