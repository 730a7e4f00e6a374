/** The one scrubber: every encoding an echoing service may use, at any position, before any cut. */
import { describe, expect, it } from 'vitest';
import { REDACTED, SecretSet, scrubAndTruncate, scrubSecrets } from '../../src/common/scrub.js';
import { base32, echoForms, leaks, pieces } from '../support/hostile.js';

const SECRET = 'pa"ss\\wörd </x> & 9f3c-17ab';

describe('scrubSecrets', () => {
  it.each(Object.entries(echoForms(SECRET)))('removes the %s form wherever it sits', (_name, form) => {
    for (const text of [form, `before ${form}`, `${form} after`, `a${form}b`]) {
      const out = scrubSecrets(text, [SECRET]);
      expect(out).toContain(REDACTED);
      expect(leaks(out, SECRET)).toEqual([]);
    }
  });

  it('removes a dashed token (a UUID) written without its dashes, in either case', () => {
    const token = '8f414b99-8697-4992-b453-0e0b80d203ab';
    for (const form of ['8f414b9986974992b4530e0b80d203ab', '8F414B9986974992B4530E0B80D203AB'])
      expect(scrubSecrets(`bad token ${form}!`, [token])).toBe(`bad token ${REDACTED}!`);
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

  describe('every JSON encoder and letter case a real service or proxy may use', () => {
    // The secrets of the red-team review: an LDAP bind password, a login password, a rekey share.
    const bindpass = 'Bind-P@ss/wörd+"q"&=1<a>';
    const login = 'Lo&gin<pw>ö';
    const share = 'f6ac2cef0b9d41e7a35c88d2f1e04b6a';
    const u = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
    /** How an encoder writes `value` in a JSON string: which characters it \u-escapes, and `/`. */
    const encoded = (value: string, escaped: RegExp | undefined, slash: boolean) => {
      let text = JSON.stringify(value).slice(1, -1);
      if (slash) text = text.replace(/\//g, '\\/');
      return escaped ? text.replace(escaped, u) : text;
    };
    const styles: [string, RegExp | undefined][] = [
      ['nothing', undefined],
      ["<>& only (Go's encoding/json, non-ASCII raw)", /[<>&]/g],
      ['non-ASCII only (Python ensure_ascii)', /[\u007f-\uffff]/g],
      ['<>& and non-ASCII', /[<>&\u007f-\uffff]/g],
    ];

    it.each(styles.flatMap(([what, re]) => [false, true].map((slash) => [what, slash, re] as const)))(
      'escaping %s, with \\/ %s',
      (_what, slash, escaped) => {
        for (const secret of [bindpass, login]) {
          const form = encoded(secret, escaped, slash);
          // Quoted inside a JSON message too: the request body echoed by a Go service.
          const twice = encoded(JSON.stringify({ p: secret }), escaped, slash);
          expect(scrubSecrets(`400 bad "${form}" end`, [secret])).toBe(`400 bad "${REDACTED}" end`);
          expect(scrubSecrets(`400 ${twice}`, [secret])).not.toContain(secret.slice(0, 6));
        }
      },
    );

    it("removes Go's own echo of the bind password: <>& escaped, ö raw", () => {
      const go = '"Bind-P@ss/wörd+\\"q\\"\\u0026=1\\u003ca\\u003e"';
      expect(scrubSecrets(`{"error":${go}}`, [bindpass])).toBe(`{"error":"${REDACTED}"}`);
    });

    it('removes a secret echoed in another letter case; base64 stays case-sensitive', () => {
      const lowerUrl = encodeURIComponent(bindpass).toLowerCase();
      expect(lowerUrl).toMatch(/^bind-p%40ss%2fw%c3%b6rd/);
      expect(scrubSecrets(`proxy: ${lowerUrl}`, [bindpass])).toBe(`proxy: ${REDACTED}`);
      expect(scrubSecrets(`share ${share.toUpperCase()} refused`, [share])).toBe(`share ${REDACTED} refused`);
      expect(scrubSecrets(`LOGIN ${login.toUpperCase()}`, [login])).toBe(`LOGIN ${REDACTED}`);
      // Another case of a base64 run is other bytes, and ordinary text must survive.
      const swapped = Buffer.from(`x ${bindpass}`)
        .toString('base64')
        .replace(/[a-z]/gi, (c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()));
      expect(scrubSecrets(`run ${swapped}`, [bindpass])).toBe(`run ${swapped}`);
    });
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

  it('replaces a whole base32 run that holds the secret at any of the five byte alignments, in either case', () => {
    for (const prefix of ['', 'a', 'ab', 'abc', 'abcd', '{"password":"']) {
      const run = base32(Buffer.from(`${prefix}${SECRET}" and more text after it`));
      for (const form of [run, run.replace(/=+$/, ''), run.toLowerCase()]) {
        const out = scrubSecrets(`echo: ${form} (end)`, [SECRET]);
        expect(out).toBe(`echo: ${REDACTED} (end)`);
      }
    }
  });

  it('removes the hex of a secret inside a longer dump, in either case, and the hex of its JSON form', () => {
    const token = '9f1c2e7a-5b3d-4e8f-a1b2-c3d4e5f60718';
    const dump = Buffer.from(`Authorization: Bearer ${token}\r\n`).toString('hex');
    for (const form of [dump, dump.toUpperCase()]) {
      const out = scrubSecrets(`request: ${form}`, [token]);
      expect(leaks(out, token)).toEqual([]);
      // Only the secret's bytes go: the header name around it stays readable to whoever debugs.
      expect(out.toLowerCase()).toContain(Buffer.from('Authorization: Bearer ').toString('hex'));
    }
    const body = Buffer.from(JSON.stringify({ password: SECRET })).toString('hex');
    expect(leaks(scrubSecrets(body, [SECRET]), SECRET)).toEqual([]);
  });

  it('scrubs the hex and base32 of a 4-character secret, leaves a 3-character one and ordinary text alone', () => {
    const pin = 'x7Qz';
    const forms = echoForms(pin);
    for (const form of [forms.hex, forms.hexUpper, forms.base32, forms.base32Unpadded]) {
      expect(scrubSecrets(`pin ${form} refused`, [pin])).toBe(`pin ${REDACTED} refused`);
    }
    // Below the length every secret must reach, nothing is scrubbed: its encodings are too short to
    // tell from ordinary text.
    const short = echoForms('ab1');
    const text = `ids ${short.hex} ${short.base32} ${short.base64}`;
    expect(scrubSecrets(text, ['ab1'])).toBe(text);
    // The texts an error holds besides the secret survive: ids, digests, words, other encodings.
    const ordinary = [
      'job web-7 in namespace default: 3 allocations failed',
      'eval 2c0bf9d4-cad7-484f-bebb-da68921a3fcd, index 4096',
      `sha256 ${'a3f5c8e1'.repeat(8)}`,
      `MZXW6YTBOI====== ${Buffer.from('unrelated').toString('hex')}`,
    ].join('\n');
    expect(scrubSecrets(ordinary, [pin, 'pa55', 'test'])).toBe(ordinary);
  });

  it('leaves other text and other base64 alone, and very short values too', () => {
    const other = Buffer.from('nothing to see here').toString('base64');
    expect(scrubSecrets(`ok ${other} done`, [SECRET])).toBe(`ok ${other} done`);
    expect(scrubSecrets('a b c', ['a', undefined])).toBe('a b c');
  });
});

describe("a SecretSet shared by many scrubs (a run's sensitive values)", () => {
  it("is scrubbed with the scrub's own secrets, in every form", () => {
    const run = new SecretSet(['run-password-one', 'run-password-two']);
    const text = `a ${Buffer.from('run-password-two').toString('base64')} b run-password-one c own-secret-9 d`;
    const scrubbed = scrubSecrets(text, ['own-secret-9', run]);
    expect(scrubbed).toBe(`a ${REDACTED} b ${REDACTED} c ${REDACTED} d`);
  });

  it('leaves no piece of a secret that holds one of the set, nor of one the set holds', () => {
    // Two passes would cut the outer one around the inner: one pass replaces the overlap whole.
    for (const [own, shared] of [
      ['abcd-hunter2-xyz', 'hunter2-'],
      ['hunter2-', 'abcd-hunter2-xyz'],
    ] as const) {
      const scrubbed = scrubSecrets('x abcd-hunter2-xyz y', [own, new SecretSet([shared])]);
      expect(scrubbed).toBe(`x ${REDACTED} y`);
    }
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
