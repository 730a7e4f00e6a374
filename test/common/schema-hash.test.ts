/**
 * The key a generated validator is stored and found under (`schemaKey`, a plain-JavaScript hash since
 * node:crypto left the start-up path): a schema that changed since the build must not find the
 * validator generated for the old one, however small the change, and the same schema always finds it.
 */
import { describe, expect, it } from 'vitest';
import { schemaKey } from '../../src/common/precompiled.js';
import { hash160 } from '../../src/common/schema-hash.js';

describe('hash160', () => {
  it('is 40 hex digits, the same for the same text', () => {
    const text = JSON.stringify({ type: 'object', properties: { name: { type: 'string' } } });
    expect(hash160(text)).toMatch(/^[0-9a-f]{40}$/);
    expect(hash160(text)).toBe(hash160(`${text}`));
  });

  it('tells apart texts that differ in one character anywhere, or only in length', () => {
    const base = JSON.stringify({ description: 'x'.repeat(2000), enum: ['a', 'b', 'c'] });
    const seen = new Set([hash160(base)]);
    const variants: string[] = [];
    for (let i = 0; i < base.length; i += 1) {
      const code = base.charCodeAt(i);
      variants.push(base.slice(0, i) + String.fromCharCode(code ^ 1) + base.slice(i + 1));
      variants.push(base.slice(0, i) + base.slice(i + 1));
    }
    variants.push(`${base}\u0000`, `\u0000${base}`, '', '\u0000');
    for (const v of variants) seen.add(hash160(v));
    expect(seen.size).toBe(new Set([base, ...variants]).size);
  });

  it('tells apart characters beyond Latin-1 (each UTF-16 unit counts)', () => {
    expect(hash160('Beschreibung: Größe')).not.toBe(hash160('Beschreibung: Grösse'));
    expect(hash160('\u{1F600}')).not.toBe(hash160('\u{1F601}'));
  });
});

describe('schemaKey', () => {
  it('changes when a schema gains a constraint, and keeps the key shape the loader accepts', () => {
    const schema = { type: 'object', properties: { port: { type: 'integer' } } };
    const stricter = { type: 'object', properties: { port: { type: 'integer', maximum: 65535 } } };
    expect(schemaKey(schema)).toMatch(/^v[0-9a-f]{40}$/);
    expect(schemaKey(schema)).not.toBe(schemaKey(stricter));
  });
});
