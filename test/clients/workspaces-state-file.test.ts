/** Reading a local state file before a push: what is accepted, what is refused and how it says so. */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseStateFile, StateFileError } from '../../src/clients/workspaces/state-file.js';

const good = {
  version: 4,
  terraform_version: '1.9.0',
  serial: 7,
  lineage: '0b6e8a5f-1c2d-4e3f-9a8b-7c6d5e4f3a2b',
  outputs: {},
  resources: [
    { mode: 'managed', type: 'null_resource', name: 'a', instances: [{}, {}] },
    { mode: 'managed', type: 'null_resource', name: 'b', instances: [{}] },
    { mode: 'data', type: 'external', name: 'c', instances: [{}] },
  ],
};

const text = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

describe('parseStateFile', () => {
  it('reads a format-4 state with its md5 and base64 computed from the exact text', () => {
    const raw = text({ ...good, note: 'é ünïcode' });
    const info = parseStateFile(raw, 'states/app.tfstate');
    expect(info).toMatchObject({ serial: 7, lineage: good.lineage, version: 4, resourceCount: 3, text: raw });
    expect(info.md5).toBe(createHash('md5').update(Buffer.from(raw, 'utf8')).digest('hex'));
    expect(Buffer.from(info.base64, 'base64').toString('utf8')).toBe(raw);
  });

  it('accepts serial 0 and a state without resources', () => {
    const info = parseStateFile(text({ version: 4, serial: 0, lineage: 'l' }), 'x');
    expect(info).toMatchObject({ serial: 0, resourceCount: 0 });
  });

  it.each([
    ['not JSON', '{"version": 4,', /^app\.tfstate: not a state file: not valid JSON/],
    ['a JSON array', '[]', /^app\.tfstate: not a state file: expected a JSON object$/],
    [
      'no version',
      text({ serial: 1, lineage: 'l' }),
      /^app\.tfstate: not a state file: it has no "version"$/,
    ],
    [
      'an old format',
      text({ version: 3, serial: 1, lineage: 'l' }),
      /^app\.tfstate: state format version 3 is not supported; only version 4 \(written by the engine 0\.12 and later\) can be pushed$/,
    ],
    ['no serial', text({ version: 4, lineage: 'l' }), /^app\.tfstate: the state has no "serial"$/],
    [
      'a negative serial',
      text({ version: 4, serial: -1, lineage: 'l' }),
      /"serial" must be an integer of 0 or more, not -1/,
    ],
    ['a fractional serial', text({ version: 4, serial: 1.5, lineage: 'l' }), /not 1\.5/],
    ['a string serial', text({ version: 4, serial: '1', lineage: 'l' }), /not "1"/],
    ['no lineage', text({ version: 4, serial: 1 }), /^app\.tfstate: the state has no "lineage"$/],
    [
      'an empty lineage',
      text({ version: 4, serial: 1, lineage: '' }),
      /"lineage" must be a non-empty string/,
    ],
  ])('refuses %s, naming the file', (_what, raw, message) => {
    let error: unknown;
    try {
      parseStateFile(raw, 'app.tfstate');
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(StateFileError);
    expect((error as StateFileError).source).toBe('app.tfstate');
    expect((error as Error).message).toMatch(message);
  });
});

describe('parseStateFile on a file that is not a state file', () => {
  it('never quotes the file in its error (it may be a secrets file given by mistake)', () => {
    const secret = 'DB_PASSWORD=hunter2-very-secret\nAPI_KEY=abc';
    expect(() => parseStateFile(secret, '.env')).toThrow(/^\.env: not a state file: not valid JSON/);
    try {
      parseStateFile(secret, '.env');
    } catch (error) {
      expect(String((error as Error).message)).not.toContain('hunter2');
      expect(String((error as Error).message)).not.toContain('DB_PASSWORD');
    }
  });
});
