/**
 * `plan --markdown` against two registries, the default and a named Connection `eu`, each holding a
 * role of the same name: the table names the connection, as the text plan's heading does, so a
 * reviewer tells the two clusters' changes apart (they read as two identical rows before).
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

const EU_TOKEN = 'markdown-eu-token-3f81';
let home: RunningSandbox;
let eu: RunningSandbox;
let env: Record<string, string | undefined>;

function manifest(description: string, euRoles: string[]): string {
  const dir = tempDir('converge-markdown-conn-');
  const docs = [
    `apiVersion: converge/v1\nkind: Connection\nmetadata: { name: eu }\nspec: { service: registry, address: "${eu.url}", token: "\${env:EU_TOKEN}" }\n`,
    `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: web-readers, namespace: default }\nspec: { Description: ${description} }\n`,
    ...euRoles.map(
      (name) =>
        `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: ${name}, namespace: default, connection: eu }\nspec: { Description: ${description} }\n`,
    ),
  ];
  writeFileSync(path.join(dir, 'roles.yaml'), docs.join('---\n'));
  return dir;
}

beforeAll(async () => {
  home = await startSandbox({ port: 0, token: 'markdown-home-token-9a27' });
  eu = await startSandbox({ port: 0, token: EU_TOKEN });
  env = {
    ...home.env(),
    NO_COLOR: '1',
    CONVERGE_STATE_DIR: tempDir('converge-markdown-conn-state-'),
    EU_TOKEN,
    CONVERGE_ALLOW_ENV: 'EU_TOKEN',
    CONVERGE_ALLOW_ADDRESSES: eu.url,
  };
  const applied = await runCli(
    ['apply', '-f', manifest('one', ['web-readers', 'eu-only']), '--auto-approve'],
    env,
  );
  expect(applied.code, applied.stdout + applied.stderr).toBe(0);
});
afterAll(async () => {
  await Promise.all([home?.close(), eu?.close()]);
});

describe('plan --markdown with the same role on the default connection and on Connection eu', () => {
  it('names the connection in the table, for updates and pruned deletions alike', async () => {
    const dir = manifest('two', ['web-readers']);
    const md = await runCli(['plan', '-f', dir, '--prune', '--markdown'], env);
    expect(md.code, md.stderr).toBe(0);
    const rows = md.stdout.split('\n').filter((l) => l.startsWith('| `'));
    expect(rows).toEqual([
      '| `-` delete | AclRole | eu-only | namespace default, connection eu |',
      '| `~` update | AclRole | web-readers | namespace default |',
      '| `~` update | AclRole | web-readers | namespace default, connection eu |',
    ]);
    // The text plan says the same of each object.
    const text = await runCli(['plan', '-f', dir, '--prune'], env);
    expect(text.stdout).toContain('# AclRole "web-readers" in namespace default will be updated in place');
    expect(text.stdout).toContain(
      '# AclRole "web-readers" in namespace default on connection eu will be updated in place',
    );
    expect(text.stdout).toContain(
      '# AclRole "eu-only" in namespace default on connection eu will be deleted',
    );
  });
});
