import { describe, expect, test } from 'vitest';
import {
  expandReferences,
  type InterpolationSources,
  referenceStarts,
} from '../../src/manifest/interpolate.js';
import { load, loadErrors, role, testRoleKind, writeTree } from './helpers.js';

describe('expandReferences', () => {
  const sources: InterpolationSources = {
    env: (name) => {
      const value = ({ A: 'alpha', B: 'beta', EMPTY: '' } as Record<string, string>)[name];
      return value === undefined ? { missing: true } : { value };
    },
    file: async (reference) =>
      reference === 'x.txt' ? { ok: true, text: 'X\n' } : { ok: false, reason: `${reference} not found` },
  };

  test.each([
    ['no references', 'plain text', 'plain text', false],
    ['one variable', '${env:A}', 'alpha', true],
    ['several per string', 'a=${env:A}, b=${env:B}, f=${file:x.txt}', 'a=alpha, b=beta, f=X\n', true],
    ['an empty variable is still set', '[${env:EMPTY}]', '[]', true],
    ['escape', '$${env:A}', '${env:A}', false],
    ['escape next to a reference', '$${env:A}=${env:A}', '${env:A}=alpha', true],
    ['a lone dollar', 'cost: $5 and $$ and ${env:A}$', 'cost: $5 and $$ and alpha$', true],
  ])('%s', async (_name, raw, value, interpolated) => {
    expect(await expandReferences(raw, sources)).toEqual({ value, interpolated, errors: [] });
  });

  test('reports every bad reference of one string', async () => {
    const result = await expandReferences(
      '${env:NOPE} ${file:missing.txt} ${vault:x} ${env:1BAD} ${env:A',
      sources,
    );
    expect(result.errors).toEqual([
      { ordinal: 0, message: 'environment variable NOPE is not set (referenced as ${env:NOPE})' },
      { ordinal: 1, message: 'cannot use ${file:missing.txt}: missing.txt not found' },
      {
        ordinal: 2,
        message:
          'unknown reference ${vault:x}: use ${env:NAME} or ${file:path} (write $${...} for a literal "${")',
      },
      {
        ordinal: 3,
        message:
          'invalid environment variable name in ${env:1BAD}: use letters, digits and underscores, not starting with a digit',
      },
      {
        ordinal: 4,
        message: 'unterminated reference "${env:A": missing "}" (write $${...} for a literal "${")',
      },
    ]);
  });

  test('counts references as the expansion does: escapes are not references', () => {
    expect(referenceStarts('a $${env:A} ${env:B} $${x} ${env:C')).toEqual([12, 27]);
    expect(referenceStarts('${env:A}${env:B}')).toEqual([0, 8]);
    expect(referenceStarts('no references, $5')).toEqual([]);
  });
});

describe('interpolation in manifests', () => {
  test('env and file values, relative to the manifest folder, recorded as sensitive', async () => {
    const dir = writeTree({
      'infra/roles/web.yaml': `apiVersion: converge/v1
kind: TestRole
metadata:
  name: web
spec:
  Description: "owner ${'${env:OWNER}'} / cert ${'${file:../certs/ca.pem}'}"
  Token: \${env:TOKEN}
  Policies:
    - Name: literal $\${env:NOT_EXPANDED}
`,
      'infra/certs/ca.pem': '-----BEGIN CERTIFICATE-----\nabc\n-----END CERTIFICATE-----\n',
    });
    const manifest = await load(dir, ['infra'], {
      env: { OWNER: 'ops', TOKEN: 's3cret', CONVERGE_ALLOW_ENV: 'OWNER,TOKEN' },
    });
    const [web] = manifest.resources;
    expect(web!.spec).toEqual({
      Description: 'owner ops / cert -----BEGIN CERTIFICATE-----\nabc\n-----END CERTIFICATE-----\n',
      Token: 's3cret',
      Level: 1,
      Policies: [{ Name: 'literal ${env:NOT_EXPANDED}' }],
    });
    expect([...web!.sensitivePointers].sort()).toEqual(['/spec/Description', '/spec/Token']);
  });

  test('block scalars keep the trailing newline of a file', async () => {
    const dir = writeTree({
      'job.yaml':
        'apiVersion: converge/v1\nkind: TestJob\nmetadata: { name: j }\nspec:\n  Datacenters: [dc1]\n  Payload: ${file:payload.hcl}\n',
      'payload.hcl': 'job "j" {\n}\n',
    });
    const manifest = await load(dir, ['job.yaml']);
    expect(manifest.resources[0]!.spec.Payload).toBe('job "j" {\n}\n');
  });

  test('a file of one line gives that line, without the line break an editor or echo adds', async () => {
    const doc = (value: string) =>
      `apiVersion: converge/v1\nkind: TestRole\nmetadata: { name: r }\nspec:\n  Description: "${value}"\n`;
    const cases: [string, string][] = [
      ['hunter2-password\n', 'hunter2-password'],
      ['windows-line\r\n', 'windows-line'],
      ['no-break-at-all', 'no-break-at-all'],
      // Only one break goes: a second is the file's own, and several lines are kept exactly.
      ['blank-after\n\n', 'blank-after\n\n'],
      ['two\nlines\n', 'two\nlines\n'],
      ['\n', ''],
    ];
    for (const [text, expected] of cases) {
      const dir = writeTree({ 'r.yaml': doc('<${file:value.txt}>'), 'value.txt': text });
      const manifest = await load(dir, ['r.yaml']);
      expect(manifest.resources[0]!.spec.Description, JSON.stringify(text)).toBe(`<${expected}>`);
    }
  });

  test('defaults to process.env', async () => {
    const dir = writeTree({ 'a.yaml': role('a', '  Token: ${env:CONVERGE_TEST_VALUE}\n') });
    process.env.CONVERGE_TEST_VALUE = 'from-process';
    process.env.CONVERGE_ALLOW_ENV = 'CONVERGE_TEST_VALUE';
    try {
      const manifest = await load(dir, ['a.yaml'], { env: undefined });
      expect(manifest.resources[0]!.spec.Token).toBe('from-process');
    } finally {
      delete process.env.CONVERGE_TEST_VALUE;
      delete process.env.CONVERGE_ALLOW_ENV;
    }
  });

  test('does not look up inherited properties of the env object', async () => {
    const dir = writeTree({ 'a.yaml': role('a', '  Token: ${env:constructor}\n') });
    expect(await loadErrors(dir, ['a.yaml'], { env: { CONVERGE_ALLOW_ENV: 'constructor' } })).toEqual([
      'a.yaml:7:10: environment variable constructor is not set (referenced as ${env:constructor})',
    ]);
  });

  test('missing variables and files are errors at the reference, all reported', async () => {
    const dir = writeTree({
      'sub/a.yaml': `apiVersion: converge/v1
kind: TestRole
metadata:
  name: a
spec:
  Description: '\${env:MISSING_ONE}'
  Token: >-
    \${file:nope/key.txt}
  Policies:
    - Name: "\${env:OK} \${env:MISSING_TWO}"
`,
    });
    const env = { OK: 'ok', CONVERGE_ALLOW_ENV: 'OK,MISSING_*' };
    expect(await loadErrors(dir, ['sub/a.yaml'], { env })).toEqual([
      'sub/a.yaml:6:17: environment variable MISSING_ONE is not set (referenced as ${env:MISSING_ONE})',
      'sub/a.yaml:8:5: cannot use ${file:nope/key.txt}: sub/nope/key.txt not found',
      'sub/a.yaml:10:24: environment variable MISSING_TWO is not set (referenced as ${env:MISSING_TWO})',
    ]);
  });

  test('a variable set in another letter case is named, only when the manifest may read it', async () => {
    const dir = writeTree({ 'a.yaml': role('a', '  Token: "${env:team_ldap_bindpass}"\n') });
    const allowed = { TEAM_LDAP_BINDPASS: 'x', CONVERGE_ALLOW_ENV: '*' };
    expect(await loadErrors(dir, ['a.yaml'], { env: allowed })).toEqual([
      'a.yaml:7:11: environment variable team_ldap_bindpass is not set (names are case-sensitive: did you mean TEAM_LDAP_BINDPASS?) (referenced as ${env:team_ldap_bindpass})',
    ]);
    // Not exposed to the manifest: not suggested, which would tell that the runner has it.
    const hidden = { TEAM_LDAP_BINDPASS: 'x', CONVERGE_ALLOW_ENV: 'team_*' };
    expect((await loadErrors(dir, ['a.yaml'], { env: hidden }))[0]).not.toContain('did you mean');
  });

  test('a string whose source writes its references otherwise than its value holds them is reported at its start', async () => {
    // "\\x24$" is `$$` in the value, an escape there, but a `$` and a reference in the source: the one
    // reference of the value (env:A) is not the one the source writes (env:B).
    const dir = writeTree({ 'a.yaml': role('a', '  Token: "\\x24${env:B} \\x24{env:A}"\n') });
    expect(await loadErrors(dir, ['a.yaml'], { env: { CONVERGE_ALLOW_ENV: 'A,B', B: 'b' } })).toEqual([
      'a.yaml:7:10: environment variable A is not set (referenced as ${env:A})',
    ]);
  });

  test('a string whose source writes a reference with an escape is reported at its start', async () => {
    // "\u0024{" is a `${` in the value but not in the source: no column there can be trusted.
    const dir = writeTree({
      'a.yaml': role('a', '  Token: "\\u0024{env:NOPE} ${env:NOPE}"\n'),
    });
    expect(await loadErrors(dir, ['a.yaml'], { env: { CONVERGE_ALLOW_ENV: 'NOPE' } })).toEqual([
      'a.yaml:7:10: environment variable NOPE is not set (referenced as ${env:NOPE})',
      'a.yaml:7:10: environment variable NOPE is not set (referenced as ${env:NOPE})',
    ]);
  });

  test('refuses files over 1 MiB, binary files and folders', async () => {
    const dir = writeTree({
      'a.yaml': role(
        'a',
        '  Token: ${file:big.txt}\n  Policies:\n    - Name: ${file:blob.bin}\n    - Name: ${file:certs}\n',
      ),
      'big.txt': 'x'.repeat(1024 * 1024 + 1),
      'blob.bin': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01]),
      'certs/ca.pem': 'pem',
    });
    expect(await loadErrors(dir, ['a.yaml'])).toEqual([
      'a.yaml:7:10: cannot use ${file:big.txt}: big.txt is 1048577 bytes, over the 1 MiB limit',
      'a.yaml:9:13: cannot use ${file:blob.bin}: blob.bin is not a text file (NUL bytes or invalid UTF-8)',
      'a.yaml:10:13: cannot use ${file:certs}: certs is a folder, not a file',
    ]);
  });

  test('a failed interpolation is not reported again by the schema', async () => {
    const dir = writeTree({
      'a.yaml':
        'apiVersion: converge/v1\nkind: TestRole\nmetadata:\n  name: ${env:NAME}\nspec: { Description: x }\n',
    });
    expect(await loadErrors(dir, ['a.yaml'], { env: { CONVERGE_ALLOW_ENV: 'NAME' } })).toEqual([
      'a.yaml:4:9: environment variable NAME is not set (referenced as ${env:NAME})',
    ]);
  });

  test('schema errors never echo an interpolated value', async () => {
    const dir = writeTree({ 'a.yaml': role('a', '  Mode: ${env:SECRET}\n') });
    const lines = await loadErrors(dir, ['a.yaml'], {
      env: { SECRET: 'hunter2', CONVERGE_ALLOW_ENV: 'SECRET' },
    });
    expect(lines).toEqual([
      'a.yaml:7:9: spec.Mode must be one of "read", "write", got (an interpolated value, not shown)',
    ]);
    expect(lines.join('\n')).not.toContain('hunter2');
  });

  test("a kind's own rule never echoes an interpolated value, even one it quotes lower-cased", async () => {
    // A rule like the directory configuration's: the filter must name the attribute's value.
    const ruledKind = {
      ...testRoleKind,
      kind: 'RuledRole',
      validateSpec: (spec: Record<string, unknown>) =>
        String(spec.Description).includes('{{')
          ? []
          : [
              {
                pointer: '/Description',
                message: `Description must mention "${String(spec.Token).toLowerCase()}"`,
              },
            ],
    };
    const dir = writeTree({
      'a.yaml':
        'apiVersion: converge/v1\nkind: RuledRole\nmetadata: { name: a }\nspec:\n  Description: x\n  Token: ${env:SECRET}\n',
    });
    const lines = await loadErrors(dir, ['a.yaml'], {
      kinds: [ruledKind],
      env: { SECRET: 'Zz9SecretValueQq', CONVERGE_ALLOW_ENV: 'SECRET' },
    });
    expect(lines).toEqual(['a.yaml:5:16: Description must mention "(an interpolated value, not shown)"']);
    expect(lines.join('\n').toLowerCase()).not.toContain('zz9secretvalueqq');
  });

  test("schema errors never echo a value written literally at a kind's secret attribute", async () => {
    const secretKind = { ...testRoleKind, kind: 'SecretRole', writeOnly: ['Token'] };
    const dir = writeTree({
      'a.yaml':
        'apiVersion: converge/v1\nkind: SecretRole\nmetadata: { name: a }\nspec:\n  Description: x\n  Token: 123456789\n',
    });
    const lines = await loadErrors(dir, ['a.yaml'], { kinds: [secretKind] });
    expect(lines).toEqual([
      'a.yaml:6:10: spec.Token must be string, got number (sensitive value, not shown)',
    ]);
    expect(lines.join('\n')).not.toContain('123456789');
  });

  test('values reached through an alias are sensitive too', async () => {
    const dir = writeTree({
      'a.yaml': `apiVersion: converge/v1
kind: TestRole
metadata: { name: a }
spec:
  Description: &token \${env:TOKEN}
  Token: *token
`,
    });
    const manifest = await load(dir, ['a.yaml'], { env: { TOKEN: 't', CONVERGE_ALLOW_ENV: 'TOKEN' } });
    expect(manifest.resources[0]!.spec).toMatchObject({ Description: 't', Token: 't' });
    expect([...manifest.resources[0]!.sensitivePointers].sort()).toEqual([
      '/spec/Description',
      '/spec/Token',
    ]);
  });

  test('interpolated values in lists, under escaped keys and in inline merges are sensitive where they land', async () => {
    const dir = writeTree({
      'a.yaml': `apiVersion: converge/v1
kind: TestRole
metadata:
  name: a
  labels: { "a/b~c": "\${env:TOKEN}" }
spec:
  <<: { Description: "\${env:TOKEN}" }
  Policies:
    - Name: plain
    - Name: \${env:TOKEN}
`,
    });
    const manifest = await load(dir, ['a.yaml'], { env: { TOKEN: 't', CONVERGE_ALLOW_ENV: 'TOKEN' } });
    expect([...manifest.resources[0]!.sensitivePointers].sort()).toEqual([
      '/metadata/labels/a~1b~0c',
      '/spec/Description',
      '/spec/Policies/1/Name',
    ]);
  });

  test('keys are not interpolated', async () => {
    const dir = writeTree({
      'a.yaml':
        'apiVersion: converge/v1\nkind: TestRole\nmetadata:\n  name: a\n  labels: { "${env:K}": v }\nspec: { Description: x }\n',
    });
    const manifest = await load(dir, ['a.yaml'], { env: { K: 'team' } });
    expect(manifest.resources[0]!.labels).toEqual({ '${env:K}': 'v' });
  });
});

describe('a sensitive variable in an object name or namespace', () => {
  const env = (extra: Record<string, string> = {}) => ({
    CONVERGE_ALLOW_ENV: 'TEAM_TOKEN,TEAM',
    TEAM_TOKEN: 'hunter22',
    TEAM: 'platform',
    ...extra,
  });

  test('is refused at its line, naming the variable and never the value', async () => {
    const dir = writeTree({
      'a.yaml': `${role('${env:TEAM_TOKEN}-role')}---\napiVersion: converge/v1\nkind: TestRole\nmetadata:\n  name: b\n  namespace: ns-\${env:TEAM_TOKEN}\nspec: { Description: b }\n`,
    });
    const errors = await loadErrors(dir, ['a.yaml'], { env: env() });
    const text = errors.join('\n');
    expect(text).not.toContain('hunter22');
    expect(text).toMatch(/a\.yaml:4:\d+: metadata\.name holds the value of TEAM_TOKEN, a sensitive variable/);
    expect(text).toMatch(/a\.yaml:12:\d+: metadata\.namespace holds the value of TEAM_TOKEN/);
  });

  test('is allowed from a variable that is not sensitive, or once the operator says it is not', async () => {
    const dir = writeTree({ 'a.yaml': role('${env:TEAM}-${env:TEAM_TOKEN}') });
    await expect(load(dir, ['a.yaml'], { env: env() })).rejects.toThrow(/TEAM_TOKEN/);
    const plain = writeTree({ 'a.yaml': role('${env:TEAM}-role') });
    expect((await load(plain, ['a.yaml'], { env: env() })).resources[0]!.name).toBe('platform-role');
    const declared = await load(dir, ['a.yaml'], { env: env({ CONVERGE_SENSITIVE_ENV: 'NOTHING_*' }) });
    expect(declared.resources[0]!.name).toBe('platform-hunter22');
  });

  test('a name written in the manifest is not refused, even when it contains a secret value', async () => {
    // `root-readers` beside a sensitive value `root`: the name is in the open already.
    const dir = writeTree({ 'a.yaml': `${role('root-readers', '  Token: ${env:TEAM_TOKEN}\n')}` });
    const manifest = await load(dir, ['a.yaml'], { env: env({ TEAM_TOKEN: 'root' }) });
    expect(manifest.resources[0]!.name).toBe('root-readers');
  });

  test('the secret does not show in another problem quoting the address (declared twice)', async () => {
    const dir = writeTree({
      'a.yaml': `${role('r-${env:TEAM_TOKEN}')}---\n${role('r-${env:TEAM_TOKEN}')}`,
    });
    const text = (await loadErrors(dir, ['a.yaml'], { env: env() })).join('\n');
    expect(text).toContain('declared twice');
    expect(text).not.toContain('hunter22');
  });

  test('a value too short to be masked anywhere is not refused either', async () => {
    const dir = writeTree({ 'a.yaml': role('r-${env:TEAM_TOKEN}') });
    const manifest = await load(dir, ['a.yaml'], { env: env({ TEAM_TOKEN: 'abc' }) });
    expect(manifest.resources[0]!.name).toBe('r-abc');
  });
});
