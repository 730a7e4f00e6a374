/** Secrets that overlap in a text are hidden whole, however they overlap: no tail of either is left. */
import { describe, expect, it } from 'vitest';
import { replaceOverlapping } from '../../src/common/replace-overlapping.js';
import { REDACTED, scrubSecrets } from '../../src/common/scrub.js';
import { copiedSecrets, maskText, scrub } from '../../src/planner/masking.js';
import type { AnyResourceKind } from '../../src/resources/contract.js';

const first = 'abcdef123';
const second = '123xyz789';

describe('replaceOverlapping', () => {
  it('hides the union of overlapping and touching matches as one stretch each', () => {
    const pattern = /abcdef123|123xyz789|QQQQ/g;
    expect(replaceOverlapping('<abcdef123xyz789>', pattern, '#')).toBe('<#>');
    // The other order: the later secret starts first.
    expect(replaceOverlapping('<123xyz789abcdef123>', pattern, '#')).toBe('<#>');
    // Apart, each is its own stretch; the text between stays.
    expect(replaceOverlapping('abcdef123 and 123xyz789', pattern, '#')).toBe('# and #');
    expect(replaceOverlapping('no secret here', pattern, '#')).toBe('no secret here');
  });

  it('leaves the pattern usable again (its position is reset on every call)', () => {
    const pattern = /abcdef123/g;
    expect(replaceOverlapping('x abcdef123', pattern, '#')).toBe('x #');
    expect(replaceOverlapping('abcdef123 y', pattern, '#')).toBe('# y');
  });

  it('refuses a pattern that is not global (it would find only the first match)', () => {
    expect(() => replaceOverlapping('x', /x/, '#')).toThrow(/global/);
  });
});

describe('overlapping secrets in every scrubber', () => {
  const text = `refused: ${first.slice(0, 6)}${second} was echoed`;
  const leftOf = (out: string) => [first, second, 'xyz789', 'abcdef'].filter((s) => out.includes(s));

  it('errors from services (every encoding)', () => {
    const out = scrubSecrets(text, [first, second]);
    expect(out).toBe(`refused: ${REDACTED} was echoed`);
    expect(leftOf(out)).toEqual([]);
  });

  it("apply errors, scrubbed of the object's own secrets", () => {
    expect(leftOf(scrub(text, [first, second]))).toEqual([]);
  });

  it("copies of the manifest's secrets in a plan", () => {
    const kind = { kind: 'Thing', sensitive: ['password'] } as unknown as AnyResourceKind;
    const secrets = copiedSecrets(
      [
        { key: { kind: 'Thing' }, spec: { password: first } },
        { key: { kind: 'Thing' }, spec: { password: second } },
      ],
      () => kind,
    );
    expect(leftOf(maskText(text, secrets!))).toEqual([]);
  });
});

describe('a secret of several lines (a PEM key) masked line by line', () => {
  it("masks the key's own lines, never the armour lines every certificate has", () => {
    const kind = { kind: 'Thing', sensitive: ['key'] } as unknown as AnyResourceKind;
    const body = 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7';
    const key = `-----BEGIN PRIVATE KEY-----\n${body}\n-----END PRIVATE KEY-----\n`;
    const secrets = copiedSecrets([{ key: { kind: 'Thing' }, spec: { key } }], () => kind)!;
    expect(maskText(`pasted ${body}`, secrets)).not.toContain(body);
    // A public certificate beside it keeps its first and last lines readable.
    const certificate = '-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----';
    expect(maskText(certificate, secrets)).toBe(certificate);
    expect(maskText('-----BEGIN PRIVATE KEY-----', secrets)).toBe('-----BEGIN PRIVATE KEY-----');
  });
});
