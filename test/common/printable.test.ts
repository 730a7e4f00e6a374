/** Untrusted text as one safe line: nothing in it may act, hide or forge a line of its own. */
import { describe, expect, it } from 'vitest';
import { printable } from '../../src/common/printable.js';
import { REDACTED, scrubSecrets } from '../../src/common/scrub.js';

describe('printable', () => {
  it("shows GitHub's older workflow command form (##[…]) anywhere in the line, so it does not act", () => {
    expect(printable('x ##[error title=Approved]Security review passed')).toBe(
      'x #\\#[error title=Approved]Security review passed',
    );
    expect(printable('##[stop-commands]zzz')).toBe('#\\#[stop-commands]zzz');
    // Azure Pipelines' logging commands act anywhere in a line too.
    expect(printable('ok ##vso[task.setvariable variable=X]y')).toBe(
      'ok #\\#vso[task.setvariable variable=X]y',
    );
    // A single # or a bracket alone is ordinary text.
    expect(printable('issue #12 [draft]')).toBe('issue #12 [draft]');
  });

  it('shows the characters that display as nothing, astral ones included', () => {
    expect(printable('S\ufe0fE\u{e0020}C\u00adR')).toBe('S\\ufe0fE\\u{e0020}C\\u00adR');
    expect(printable('a\u2065b\u034fc')).toBe('a\\u2065b\\u034fc');
  });
});

describe('a secret with invisible characters between its letters', () => {
  const token = 'SECRETTOKEN-abcdef123456';
  it('leaves a text without a secret as it is, its invisible characters included', () => {
    // An emoji's variation selector, a soft hyphen: a value holding one holds no secret for that.
    for (const text of ['Blue \u2764\ufe0f', 'co\u00adoperate'])
      expect(scrubSecrets(text, [token])).toBe(text);
  });

  it.each([
    ['variation selectors', '\ufe0f'],
    ['tag characters', '\u{e0020}'],
    ['soft hyphens', '\u00ad'],
    ['zero-width spaces', '\u200b'],
    ['Mongolian variation selectors', '\u180b'],
    ['Khmer inherent vowels', '\u17b4'],
    ['musical formatting characters', '\u{1d173}'],
    ['shorthand format controls', '\u{1bca0}'],
    ['left-to-right marks', '\u200e'],
    ['braille blanks', '\u2800'],
    ['combining underlines', '\u0332'],
  ])('is scrubbed when %s hide it from the search', (_name, mark) => {
    const echoed = `token ${[...token].join(mark)} refused`;
    const out = scrubSecrets(echoed, [token]);
    expect(out).toBe(`token ${REDACTED} refused`);
  });
});

describe('a secret of a megabyte (a certificate bundle read from a file)', () => {
  it('is removed as written, without the pattern of its encodings outgrowing a regular expression', () => {
    const bundle = 'z'.repeat(900 * 1024);
    expect(scrubSecrets(`echo ${bundle} end`, [bundle, 'short-token-1234'])).toBe(`echo ${REDACTED} end`);
    expect(scrubSecrets('short-token-1234 only', [bundle, 'short-token-1234'])).toBe(`${REDACTED} only`);
  });
});

describe('the scrubber against a hostile echo', () => {
  const token = 's3cr3tT0ken';
  it('finds a hidden copy beside a visible one (a tie is no escape)', () => {
    const out = scrubSecrets(`x ${token}\u200b${token} y s3c\u200br3tT0ken`, [token]);
    expect(out).not.toMatch(/s3c.?r3t/u);
  });

  it('finds a secret that itself holds a combining mark, split by an invisible character', () => {
    expect(scrubSecrets('a=pa\u0301ss\u200bword-Alpha', ['pa\u0301ssword-Alpha'])).toBe(`a=${REDACTED}`);
  });

  it('escapes and strips unassigned default-ignorable characters too', () => {
    expect(printable('a\u{e0002}b')).toBe('a\\u{e0002}b');
    expect(scrubSecrets([...token].join('\u{e0002}'), [token])).toBe(REDACTED);
  });

  it('removes a long secret of accented letters without building a pattern too large', () => {
    const secret = '\u00e9'.repeat(2500);
    expect(scrubSecrets(`e${secret}f`, [secret])).toBe(`e${REDACTED}f`);
  });
});
