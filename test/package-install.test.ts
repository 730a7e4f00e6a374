/**
 * Converge installed outside the clone, as the README's "Install" section tells a user: `npm pack`,
 * then `npm install -g` of the tarball into a prefix of its own, then `converge` run from another
 * folder. Needs the build (the test script builds first). When the registry cannot be reached the
 * tarball is unpacked instead, with its dependencies resolved from this checkout's node_modules, so
 * what is packed (files, bin, its mode) is still what runs. Skipped, with the reason, without npm.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempDir } from './support/temp-dirs.js';

const root = fileURLToPath(new URL('../', import.meta.url));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const npmVersion = spawnSync(npm, ['--version'], { encoding: 'utf8', timeout: 20_000 });
const npmMissing =
  npmVersion.status !== 0 ? `npm is not available (${npmVersion.error?.message ?? 'no version'})` : '';
const built = existsSync(path.join(root, 'dist/cli/main.js'));
if (npmMissing) console.log(`skipping the install test: ${npmMissing}`);

const tmp = (prefix: string) => tempDir(prefix);
// The node running the tests, first on PATH: the installed bin's `#!/usr/bin/env node` finds it.
const env = {
  ...process.env,
  PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`,
};

/** `npm install -g` into `prefix`; false (and why) when the registry cannot be reached. */
function npmInstall(tarball: string, prefix: string): { ok: boolean; why: string } {
  const r = spawnSync(
    npm,
    ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', tarball],
    { encoding: 'utf8', timeout: 60_000, env },
  );
  return { ok: r.status === 0, why: (r.stderr || r.error?.message || '').split('\n').slice(-3).join(' ') };
}

/** What npm would lay out, by hand: the package under lib/node_modules and its bin linked. */
function unpack(tarball: string, prefix: string): void {
  const dir = path.join(prefix, 'lib', 'node_modules', 'converge');
  mkdirSync(dir, { recursive: true });
  execFileSync('tar', ['-xzf', tarball, '-C', dir, '--strip-components=1']);
  symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  mkdirSync(path.join(prefix, 'bin'));
  symlinkSync(path.join(dir, 'dist', 'cli', 'main.js'), path.join(prefix, 'bin', 'converge'));
}

describe.skipIf(npmMissing !== '' || !built)('the packed package, installed outside the clone', () => {
  it('runs converge --version and validate from another folder', { timeout: 120_000 }, () => {
    const packDir = tmp('converge-pack-');
    // The build is already there; --ignore-scripts keeps `prepare` from building it again.
    execFileSync(npm, ['pack', '--ignore-scripts', '--pack-destination', packDir], {
      cwd: root,
      env,
      stdio: 'ignore',
    });
    const tarball = path.join(
      packDir,
      readdirSync(packDir).find((f) => f.endsWith('.tgz'))!,
    );

    const prefix = tmp('converge-prefix-');
    const installed = npmInstall(tarball, prefix);
    if (!installed.ok) {
      console.log(
        `npm install could not reach the registry (${installed.why}); unpacking the tarball instead`,
      );
      unpack(tarball, prefix);
    }
    const bin = path.join(prefix, 'bin', 'converge');

    const elsewhere = tmp('converge-elsewhere-');
    const version = spawnSync(bin, ['--version'], { cwd: elsewhere, encoding: 'utf8', env });
    expect(version.stderr).toBe('');
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);

    writeFileSync(
      path.join(elsewhere, 'roles.yaml'),
      'apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: readers }\nspec:\n  Description: read only\n',
    );
    const valid = spawnSync(bin, ['validate', '-f', 'roles.yaml'], { cwd: elsewhere, encoding: 'utf8', env });
    expect(valid.status, valid.stderr).toBe(0);

    writeFileSync(path.join(elsewhere, 'broken.yaml'), 'apiVersion: converge/v1\nkind: AclRole\nspec: {}\n');
    const invalid = spawnSync(bin, ['validate', '-f', 'broken.yaml'], {
      cwd: elsewhere,
      encoding: 'utf8',
      env,
    });
    expect(invalid.status).toBe(1);
    expect(invalid.stderr).toContain('broken.yaml:');
  });
});
