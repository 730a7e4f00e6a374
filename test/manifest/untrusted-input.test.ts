/**
 * A manifest may come from anyone (a pull request) while the process holds Converge's tokens: it
 * reads only the variables the operator exposes and only files inside its root, never Converge's
 * credentials or state. YAML merge keys work, with every guard of plain aliases kept.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { allowListFrom } from '../../src/common/allow-list.js';
import { envAccess } from '../../src/manifest/env-access.js';
import { readLocalFile } from '../../src/resources/local-file.js';
import { base32 } from '../support/hostile.js';
import { load, loadErrors, role, writeTree } from './helpers.js';

const head = 'apiVersion: converge/v1\nkind: TestRole\nmetadata: { name: a }\n';

describe('${file:} stays inside the manifest root', () => {
  test('an absolute path is refused, and the file is not read', async () => {
    const dir = writeTree({ 'a.yaml': role('a', '  Token: ${file:/etc/hostname}\n') });
    const lines = await loadErrors(dir, ['a.yaml']);
    expect(lines).toEqual([
      'a.yaml:7:10: cannot use ${file:/etc/hostname}: /etc/hostname is an absolute path: name a file inside the manifest root (.), relative to the manifest file',
    ]);
  });

  test('".." that leaves the root is refused, even when the file exists', async () => {
    const dir = writeTree({
      'outside.txt': 'outside',
      'infra/a.yaml': role('a', '  Token: ${file:../outside.txt}\n'),
    });
    expect(await loadErrors(dir, ['infra'])).toEqual([
      'infra/a.yaml:7:10: cannot use ${file:../outside.txt}: outside.txt is outside the manifest root (infra): a manifest reads only files inside the folder given with -f',
    ]);
    // ".." that stays inside the root is fine.
    const inside = writeTree({
      'infra/ca.pem': 'pem',
      'infra/roles/a.yaml': role('a', '  Token: ${file:../ca.pem}\n'),
    });
    expect((await load(inside, ['infra'])).resources[0]!.spec.Token).toBe('pem');
  });

  test('the root of a file given with -f is its folder', async () => {
    const dir = writeTree({
      'secret.txt': 'secret',
      'infra/a.yaml': role('a', '  Token: ${file:../secret.txt}\n'),
    });
    expect(await loadErrors(dir, ['infra/a.yaml'])).toEqual([
      'infra/a.yaml:7:10: cannot use ${file:../secret.txt}: secret.txt is outside the manifest root (infra): a manifest reads only files inside the folder given with -f',
    ]);
  });

  test('through a linked folder that leads out, a missing file is refused as an existing one is', async () => {
    // Told apart ("not found" against "leads outside"), a pull request could probe the runner's files.
    const outside = writeTree({ 'exists.txt': 'secret\n' });
    const dir = writeTree({
      'a.yaml': role(
        'a',
        '  Token: ${file:etc/exists.txt}\n  Policies: [{ Name: "${file:etc/missing.txt}" }]\n',
      ),
    });
    fs.symlinkSync(outside, path.join(dir, 'etc'));
    const lines = await loadErrors(dir, ['a.yaml']);
    expect(
      lines.map((l) =>
        l.replace(/^a\.yaml:\d+:\d+: cannot use \$\{file:etc\/\w+\.txt\}: etc\/\w+\.txt /, ''),
      ),
    ).toEqual([
      'is a symbolic link that leads outside the manifest root (.): a manifest reads only files inside it',
      'is a symbolic link that leads outside the manifest root (.): a manifest reads only files inside it',
    ]);
  });

  test('a link that is the file itself, leading out, is refused alike whether its target exists or not', async () => {
    const outside = writeTree({ 'exists.txt': 'secret\n' });
    const dir = writeTree({
      'a.yaml': role('a', '  Token: ${file:exists.txt}\n  Policies: [{ Name: "${file:missing.txt}" }]\n'),
    });
    fs.symlinkSync(path.join(outside, 'exists.txt'), path.join(dir, 'exists.txt'));
    fs.symlinkSync(path.join(outside, 'no-such.txt'), path.join(dir, 'missing.txt'));
    const lines = await loadErrors(dir, ['a.yaml']);
    expect(
      lines.map((l) => l.replace(/^a\.yaml:\d+:\d+: cannot use \$\{file:\w+\.txt\}: \w+\.txt /, '')),
    ).toEqual([
      'is a symbolic link that leads outside the manifest root (.): a manifest reads only files inside it',
      'is a symbolic link that leads outside the manifest root (.): a manifest reads only files inside it',
    ]);
    // A link inside the root to a file that is not there is just not found.
    const inside = writeTree({ 'a.yaml': role('a', '  Token: ${file:dangling.txt}\n') });
    fs.symlinkSync('nope.txt', path.join(inside, 'dangling.txt'));
    expect(await loadErrors(inside, ['a.yaml'])).toEqual([
      'a.yaml:7:10: cannot use ${file:dangling.txt}: dangling.txt not found',
    ]);
  });

  test('a symbolic link inside the root that leads out is refused; one that stays inside is read', async () => {
    const outside = writeTree({ hostname: 'the-host\n' });
    const dir = writeTree({
      'a.yaml': role('a', '  Token: ${file:link.txt}\n  Policies: [{ Name: "${file:inner.txt}" }]\n'),
      'real.txt': 'inner',
    });
    fs.symlinkSync(path.join(outside, 'hostname'), path.join(dir, 'link.txt'));
    fs.symlinkSync('real.txt', path.join(dir, 'inner.txt'));
    const lines = await loadErrors(dir, ['a.yaml']);
    expect(lines).toEqual([
      'a.yaml:7:10: cannot use ${file:link.txt}: link.txt is a symbolic link that leads outside the manifest root (.): a manifest reads only files inside it',
    ]);
    expect(lines.join('\n')).not.toContain('the-host');
    fs.rmSync(path.join(dir, 'link.txt'));
    fs.writeFileSync(path.join(dir, 'link.txt'), 'x');
    expect((await load(dir, ['a.yaml'])).resources[0]!.spec.Policies).toEqual([{ Name: 'inner' }]);
  });

  test("Converge's state folder is never readable, even inside the root", async () => {
    const dir = writeTree({
      '.converge/state.key': 'ab'.repeat(32),
      'ci-state/inventory.json': '{}',
      'a.yaml': role(
        'a',
        '  Token: ${file:.converge/state.key}\n  Policies: [{ Name: "${file:./ci-state/inventory.json}" }]\n',
      ),
    });
    // The default state folder (.converge under the current folder) and CONVERGE_STATE_DIR.
    const lines = await loadErrors(dir, ['.'], { env: { CONVERGE_STATE_DIR: 'ci-state' } });
    expect(lines).toEqual([
      "a.yaml:7:10: cannot use ${file:.converge/state.key}: .converge/state.key is in Converge's state folder (.converge), which a manifest may never read",
      "a.yaml:8:23: cannot use ${file:./ci-state/inventory.json}: ci-state/inventory.json is in Converge's state folder (ci-state), which a manifest may never read",
    ]);
    expect(lines.join('\n')).not.toContain('abab');
  });

  test('an inventory kept elsewhere (CONVERGE_INVENTORY=file:PATH) is never readable, nor its lock', async () => {
    const dir = writeTree({
      'records/inv.json': '{"bindpass":"32a1a252"}',
      'records/apply.lock': '{"pid":1}',
      'records/inv.json.1a2b3c4d.tmp': '{}',
      'records/notes.txt': 'readable',
      'a.yaml': role(
        'a',
        '  Token: ${file:records/inv.json}\n  Policies:\n    - Name: "${file:records/apply.lock}"\n    - Name: "${file:records/inv.json.1a2b3c4d.tmp}"\n    - Name: "${file:records/notes.txt}"\n',
      ),
    });
    const lines = await loadErrors(dir, ['.'], {
      env: { CONVERGE_INVENTORY: `file:${path.join(dir, 'records/inv.json')}` },
    });
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(
      /^a\.yaml:7:\d+: cannot use \$\{file:records\/inv\.json\}: .* is Converge's inventory \(.*inv\.json\)/,
    );
    expect(lines[1]).toMatch(/records\/apply\.lock.* is Converge's inventory/);
    expect(lines[2]).toMatch(/inv\.json\.1a2b3c4d\.tmp.* is Converge's inventory/);
    expect(lines.join('\n')).not.toContain('32a1a252');
  });

  test('a manifest file found through a link that leads out of the folder is refused', async () => {
    const outside = writeTree({ 'other.yaml': role('other') });
    const dir = writeTree({ 'a.yaml': role('a') });
    fs.symlinkSync(path.join(outside, 'other.yaml'), path.join(dir, 'linked.yaml'));
    expect(await loadErrors(dir, ['.'])).toEqual([
      "linked.yaml: is a symbolic link that leads outside the manifest root (.) or into Converge's state: not read",
    ]);
  });

  test('a folder given with -f that is a link (infra -> ../..) is refused: it would move the root', async () => {
    const outside = writeTree({ 'creds.txt': 'BASE_SECRET', 'other/x.yaml': role('x') });
    const dir = writeTree({ 'evil/e.yaml': role('e', '  Token: ${file:../../creds.txt}\n') });
    fs.symlinkSync(path.relative(dir, outside), path.join(dir, 'infra'));
    const lines = await loadErrors(dir, ['infra']);
    expect(lines).toEqual([
      'infra: is a symbolic link: a checked-out link would move the manifest root (and what it may read) elsewhere; give the path it leads to with -f',
    ]);
  });

  test('a manifest file given with -f that is a link, or lies under a linked folder, is refused', async () => {
    const outside = writeTree({ 'kubeconfig.yaml': role('k', '  Token: stolen\n') });
    const dir = writeTree({ 'pr/real/a.yaml': role('a') });
    fs.symlinkSync(path.join(outside, 'kubeconfig.yaml'), path.join(dir, 'pr', 'main.yaml'));
    fs.symlinkSync('real', path.join(dir, 'pr', 'linked'));
    const lines = await loadErrors(dir, ['pr/main.yaml', 'pr/linked/a.yaml']);
    expect(lines).toEqual([
      'pr/linked/a.yaml: lies under pr/linked, which is a symbolic link: a checked-out link would move the manifest root (and what it may read) elsewhere; give the path it leads to with -f',
      'pr/main.yaml: is a symbolic link: a checked-out link would move the manifest root (and what it may read) elsewhere; give the path it leads to with -f',
    ]);
    expect(lines.join('\n')).not.toContain('stolen');
    // The real path, given as it is, still loads.
    expect((await load(dir, ['pr/real/a.yaml'])).resources.map((r) => r.name)).toEqual(['a']);
  });

  test('an object that did not come from a manifest file reads within the current folder', async () => {
    const read = await readLocalFile({}, '/etc/hostname', 1024);
    expect(read).toMatchObject({ ok: false, reason: expect.stringContaining('is an absolute path') });
    const missing = await readLocalFile({}, 'no-such-file.hcl', 1024);
    expect(missing).toMatchObject({ ok: false, notFound: true });
  });
});

describe('${env:} reads only what the operator exposes', () => {
  const doc = (reference: string) => role('a', `  Token: "${reference}"\n`);

  test('nothing is readable by default, set or not: the error names the variable and how to expose it', async () => {
    const dir = writeTree({ 'a.yaml': doc('${env:HOME_SECRET}') });
    const lines = await loadErrors(dir, ['a.yaml'], { env: { HOME_SECRET: 'do-not-print' } });
    expect(lines).toEqual([
      'a.yaml:7:11: environment variable HOME_SECRET is not exposed to the manifest: allow it with allowEnv HOME_SECRET or CONVERGE_ALLOW_ENV=HOME_SECRET (referenced as ${env:HOME_SECRET})',
    ]);
    expect(lines.join('\n')).not.toContain('do-not-print');
    expect(await loadErrors(dir, ['a.yaml'], { env: {} })).toEqual(lines);
  });

  test('a glob exposes the names it matches, from CONVERGE_ALLOW_ENV or from the caller', async () => {
    const dir = writeTree({ 'a.yaml': doc('${env:DEMO_X}') });
    const env = { DEMO_X: 'x', CONVERGE_ALLOW_ENV: 'DEMO_*' };
    expect((await load(dir, ['a.yaml'], { env })).resources[0]!.spec.Token).toBe('x');
    const allowEnv = allowListFrom(undefined, ['OTHER,DEMO_*']);
    expect((await load(dir, ['a.yaml'], { env: { DEMO_X: 'y' }, allowEnv })).resources[0]!.spec.Token).toBe(
      'y',
    );
    expect(
      await loadErrors(dir, ['a.yaml'], { env: { DEMO_X: 'x', CONVERGE_ALLOW_ENV: 'DEMO' } }),
    ).toHaveLength(1);
  });

  test.each(['CONVERGE_REGISTRY_TOKEN', 'CONVERGE_SECRETS_TOKEN', 'CONVERGE_STATE_KEY'])(
    '%s is never readable, even under *',
    async (name) => {
      const dir = writeTree({ 'a.yaml': doc(`\${env:${name}}`) });
      const lines = await loadErrors(dir, ['a.yaml'], {
        env: { [name]: 'the-credential', CONVERGE_ALLOW_ENV: '*' },
      });
      expect(lines).toEqual([
        `a.yaml:7:11: environment variable ${name} is one of Converge's credentials, which a manifest may never read (referenced as \${env:${name}})`,
      ]);
    },
  );

  test("a variable holding a credential's value is refused, and the value is not printed", async () => {
    const token = 'registry-token-0123456789';
    const dir = writeTree({ 'a.yaml': doc('${env:COPY} ${env:WRAPPED}') });
    const env = {
      CONVERGE_REGISTRY_TOKEN: token,
      COPY: token,
      WRAPPED: `Bearer ${token}`,
      CONVERGE_ALLOW_ENV: '*',
    };
    const lines = await loadErrors(dir, ['a.yaml'], { env });
    expect(lines).toEqual([
      "a.yaml:7:11: environment variable COPY holds the value of CONVERGE_REGISTRY_TOKEN, one of Converge's credentials, which a manifest may never read (referenced as ${env:COPY})",
      "a.yaml:7:23: environment variable WRAPPED holds the value of CONVERGE_REGISTRY_TOKEN, one of Converge's credentials, which a manifest may never read (referenced as ${env:WRAPPED})",
    ]);
    expect(lines.join('\n')).not.toContain(token);
  });

  test('a credential in another encoding or letter case is refused all the same', async () => {
    // UUID-shaped, as the services' tokens are: long enough for `xxd -p` to wrap its hex.
    const token = '8f14e45f-ceea-467f-a0e6-4d9b5c1f2a3b';
    const key = randomBytes(32);
    const refs = [
      'B64',
      'WRAPPED_B64',
      'HEX',
      'HEX_UPPER',
      'HEX_XXD',
      'HEX_OD',
      'UNDASHED',
      'B32',
      'KEY_UPPER',
      'KEY_B64',
      'KEY_B64URL',
    ];
    const dir = writeTree({ 'a.yaml': doc(refs.map((r) => `\${env:${r}}`).join(' ')) });
    const env = {
      CONVERGE_REGISTRY_TOKEN: token,
      CONVERGE_STATE_KEY: key.toString('hex'),
      B64: Buffer.from(token).toString('base64'),
      WRAPPED_B64: Buffer.from(`Authorization: Bearer ${token}`).toString('base64'),
      // `printf %s "$TOKEN" | xxd -p`, either case, and the token's characters without its dashes.
      HEX: Buffer.from(token).toString('hex'),
      HEX_UPPER: `0x${Buffer.from(token).toString('hex').toUpperCase()}`,
      // `xxd -p` wraps at 30 bytes; `od -An -tx1` spaces the bytes and wraps at 16.
      HEX_XXD: (
        Buffer.from(token)
          .toString('hex')
          .match(/.{1,60}/g) ?? []
      ).join('\n'),
      HEX_OD: (Buffer.from(token).toString('hex').match(/.{2}/g) ?? [])
        .map((b, i) => (i % 16 ? ` ${b}` : `\n ${b}`))
        .join(''),
      UNDASHED: token.replace(/-/g, ''),
      // `printf %s "$TOKEN" | base32`: the scrubber removes it from errors, so it is the token here too.
      B32: base32(Buffer.from(token)),
      KEY_UPPER: key.toString('hex').toUpperCase(),
      KEY_B64: key.toString('base64'),
      KEY_B64URL: `key=${key.toString('base64url')}`,
      CONVERGE_ALLOW_ENV: '*',
    };
    const lines = await loadErrors(dir, ['a.yaml'], { env });
    // Each error sits at its own reference on line 7 (the first at column 11): compared without it.
    expect(lines[0]).toMatch(/^a\.yaml:7:11: /);
    expect(lines.every((line) => /^a\.yaml:7:\d+: /.test(line))).toBe(true);
    const holds = (name: string, credential: string) =>
      `environment variable ${name} holds the value of ${credential}, one of Converge's credentials, which a manifest may never read (referenced as \${env:${name}})`;
    expect(lines.map((line) => line.replace(/^a\.yaml:7:\d+: /, ''))).toEqual([
      holds('B64', 'CONVERGE_REGISTRY_TOKEN'),
      holds('WRAPPED_B64', 'CONVERGE_REGISTRY_TOKEN'),
      holds('HEX', 'CONVERGE_REGISTRY_TOKEN'),
      holds('HEX_UPPER', 'CONVERGE_REGISTRY_TOKEN'),
      holds('HEX_XXD', 'CONVERGE_REGISTRY_TOKEN'),
      holds('HEX_OD', 'CONVERGE_REGISTRY_TOKEN'),
      holds('UNDASHED', 'CONVERGE_REGISTRY_TOKEN'),
      holds('B32', 'CONVERGE_REGISTRY_TOKEN'),
      holds('KEY_UPPER', 'CONVERGE_STATE_KEY'),
      holds('KEY_B64', 'CONVERGE_STATE_KEY'),
      holds('KEY_B64URL', 'CONVERGE_STATE_KEY'),
    ]);
    // An ordinary variable beside them is still read.
    const plain = writeTree({ 'a.yaml': doc('${env:PLAIN}') });
    expect(
      (await load(plain, ['a.yaml'], { env: { ...env, PLAIN: 'just-text' } })).resources[0]!.spec.Token,
    ).toBe('just-text');
  });

  test("a variable holding the state key file's contents is refused; the file is never created", async () => {
    const key = randomBytes(32);
    const stateDir = writeTree({ 'state.key': `${key.toString('hex')}\n` });
    const dir = writeTree({ 'a.yaml': doc('${env:COPY} ${env:AS_B64}') });
    const env = {
      CONVERGE_STATE_DIR: stateDir,
      COPY: key.toString('hex'),
      AS_B64: key.toString('base64'),
      CONVERGE_ALLOW_ENV: '*',
    };
    const lines = await loadErrors(dir, ['a.yaml'], { env });
    const file = path.join(stateDir, 'state.key');
    expect(lines).toEqual(
      [
        ['COPY', 11],
        ['AS_B64', 23],
      ].map(
        ([name, column]) =>
          `a.yaml:7:${column}: environment variable ${name} holds the value of the state key file ${file}, one of Converge's credentials, which a manifest may never read (referenced as \${env:${name}})`,
      ),
    );
    expect(lines.join('\n')).not.toContain(key.toString('hex'));
    // The default state folder, .converge under the current folder, is read too.
    const cwd = writeTree({ '.converge/state.key': key.toString('base64') });
    const readEnv = envAccess({ COPY: key.toString('hex') }, allowListFrom('*'), cwd);
    expect(readEnv('COPY')).toEqual({
      refused: expect.stringContaining(
        'holds the value of the state key file .converge/state.key',
      ) as unknown,
    });
    // Without a key file nothing is refused, and none is made.
    const empty = writeTree({});
    expect(envAccess({ COPY: 'x'.repeat(64) }, allowListFrom('*'), empty)('COPY')).toEqual({
      value: 'x'.repeat(64),
    });
    expect(fs.existsSync(path.join(empty, '.converge'))).toBe(false);
  });
});

describe('YAML merge keys', () => {
  test('an alias, or a merge of one, without its anchor says so (not "billion laughs")', async () => {
    const dir = writeTree({
      'a.yaml': role('a', '  Token: *nope\n'),
      'b.yaml': role('b', '  <<: *gone\n'),
    });
    expect(await loadErrors(dir, ['.'])).toEqual([
      'a.yaml:7:10: alias *nope has no anchor &nope before it in this document (an anchor does not reach into other documents)',
      'b.yaml:7:7: alias *gone has no anchor &gone before it in this document (an anchor does not reach into other documents)',
    ]);
  });

  test('merge: keys written in the map win, and the earlier of several merged maps', async () => {
    const dir = writeTree({
      'a.yaml': `${head}spec:
  Description: x
  Policies:
    - &first { Name: first }
    - <<: *first
    - <<: [{ Name: inline-one }, { Name: inline-two }]
    - <<: *first
      Name: own
`,
    });
    const manifest = await load(dir, ['a.yaml']);
    expect(manifest.resources[0]!.spec.Policies).toEqual([
      { Name: 'first' },
      { Name: 'first' },
      { Name: 'inline-one' },
      { Name: 'own' },
    ]);
  });

  test('a merge-based alias bomb is refused quickly with the alias error', { timeout: 10_000 }, async () => {
    // A large anchor merged many times: yaml would copy it each time before its alias count stops it.
    const keys = Array.from({ length: 20_000 }, (_, i) => `k${i}: ${i}`).join(', ');
    const merges = Array.from({ length: 300 }, (_, i) => `    - { <<: *big, Name: n${i} }`).join('\n');
    const dir = writeTree({
      'a.yaml': `${head}spec:\n  Description: x\n  Big: &big { ${keys} }\n  Policies:\n${merges}\n`,
    });
    const started = Date.now();
    const heapBefore = process.memoryUsage().heapUsed;
    expect(await loadErrors(dir, ['a.yaml'])).toEqual([
      'a.yaml:8:13: aliases expand to too much data (more than 100 times the anchored values); is this a YAML "billion laughs" bomb?',
    ]);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(500 * 1024 * 1024);
  });

  test("a small anchor merged too often meets yaml's alias count", async () => {
    const merges = Array.from({ length: 150 }, (_, i) => `    - { <<: *p, Name: n${i} }`).join('\n');
    const dir = writeTree({
      'a.yaml': `${head}spec:\n  Description: x\n  Policies:\n    - &p { Name: p }\n${merges}\n`,
    });
    expect(await loadErrors(dir, ['a.yaml'])).toEqual([
      'a.yaml:8:13: aliases expand to too much data (more than 100 times the anchored values); is this a YAML "billion laughs" bomb?',
    ]);
  });

  test('forbidden keys inside a merged map, duplicate keys and bad merge values are still refused', async () => {
    const dir = writeTree({
      'a.yaml': `${head}spec:
  Description: x
  Policies:
    - &bad { __proto__: { polluted: true }, Name: a }
    - <<: *bad
      Name: b
      Name: c
    - <<: just a string
`,
    });
    expect(await loadErrors(dir, ['a.yaml'])).toEqual([
      'a.yaml:7:14: key "__proto__" is not allowed: it could change object prototypes',
      'a.yaml:10:7: duplicate key "Name" (first defined on line 9)',
      'a.yaml:11:11: a merge key "<<" takes a mapping, an alias of one (<<: *defaults), or a list of them (<<: [*a, *b])',
    ]);
  });

  test('a schema error on a merged value points at the anchored value', async () => {
    const dir = writeTree({
      'a.yaml': `${head}spec:
  Description: x
  Policies:
    - &p { Name: "" }
    - <<: *p
`,
    });
    expect(await loadErrors(dir, ['a.yaml'])).toEqual([
      'a.yaml:7:18: spec.Policies[0].Name must not be empty',
      'a.yaml:7:18: spec.Policies[1].Name must not be empty',
    ]);
  });

  test('interpolation in an anchored map reaches the merged copies, which stay sensitive', async () => {
    const dir = writeTree({
      'a.yaml': `${head}spec:
  Description: x
  Policies:
    - &p { Name: "\${env:POLICY}" }
    - <<: *p
    - { <<: { Name: "\${env:POLICY}" } }
`,
    });
    const manifest = await load(dir, ['a.yaml'], {
      env: { POLICY: 'secret-policy', CONVERGE_ALLOW_ENV: 'POLICY' },
    });
    const [resource] = manifest.resources;
    expect(resource!.spec.Policies).toEqual([
      { Name: 'secret-policy' },
      { Name: 'secret-policy' },
      { Name: 'secret-policy' },
    ]);
    expect([...resource!.sensitivePointers].sort()).toEqual([
      '/spec/Policies/0/Name',
      '/spec/Policies/1/Name',
      '/spec/Policies/2/Name',
    ]);
  });
});
