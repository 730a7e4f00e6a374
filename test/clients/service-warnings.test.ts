/**
 * The bounds on a service's warnings, on the cases the CLI test does not reach: a cut that would
 * fall inside a surrogate pair, and a secret that straddles the cut (scrubbed before cutting).
 */
import { describe, expect, it } from 'vitest';
import { boundedWarnings, MAX_WARNING_CHARS } from '../../src/clients/http/service-warnings.js';

const noScrub = (text: string) => text;

describe('boundedWarnings', () => {
  it('never keeps half of an emoji at the cut', () => {
    const text = `${'a'.repeat(MAX_WARNING_CHARS - 1)}😀${'b'.repeat(10)}`;
    const [line] = boundedWarnings([text], noScrub);
    expect(line).toBe(`${'a'.repeat(MAX_WARNING_CHARS - 1)}… (12 more characters)`);
    expect(line).not.toMatch(/[\ud800-\udfff]/);
  });

  it('scrubs a secret that straddles the cut before cutting, so no half of it is left', () => {
    const secret = 'hunter2-hunter2';
    const text = `${'a'.repeat(MAX_WARNING_CHARS - 5)}${secret}${'b'.repeat(1000)}`;
    const [line] = boundedWarnings([text], (t) => t.replaceAll(secret, '***'));
    expect(line).not.toContain('hunter');
    expect(line).toContain('***');
  });

  it('keeps warnings that fit as they are, with no closing line', () => {
    expect(boundedWarnings(['one', 'two'], noScrub)).toEqual(['one', 'two']);
    expect(boundedWarnings([], noScrub)).toEqual([]);
  });
});
