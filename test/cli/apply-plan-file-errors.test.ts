/** `apply FILE` given something that is not a saved plan: each says what it is and what to do. */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

const env = () => ({ NO_COLOR: '1', CONVERGE_STATE_DIR: tempDir('converge-planfile-state-') });

describe('apply FILE with no saved plan there', () => {
  it('says a missing file does not exist, and how to make one', async () => {
    const file = path.join(tempDir('converge-planfile-'), 'missing.plan');
    const r = await runCli(['apply', file], env());
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `plan file ${file} does not exist (make one with \`converge plan -f PATH -out ${file}\`)`,
    );
  });

  it('refuses a file nested deeper than any plan, rather than overflowing the stack', async () => {
    const file = path.join(tempDir('converge-planfile-'), 'deep.plan');
    const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
    writeFileSync(file, `{"format": 3, "changes": [], "manifest": [], "mac": ${deep}}`);
    const r = await runCli(['apply', file], env());
    expect(r.stderr).not.toContain('call stack');
    expect(r.stderr).toContain(`${file} is not a Converge plan file (its JSON nests deeper than 200 levels)`);
    expect(r.code).toBe(1);
  });

  it('points a manifest given without -f to -f', async () => {
    const file = path.join(tempDir('converge-planfile-'), 'roles.yaml');
    writeFileSync(file, 'apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: a }\nspec: {}\n');
    const r = await runCli(['apply', file], env());
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(
      `Error: ${file} is a manifest file, not a plan saved with \`converge plan -out FILE\`. Manifest files and folders are given with -f; did you mean: converge apply -f ${file}`,
    );
  });

  it('points a folder to -f', async () => {
    const dir = path.join(tempDir('converge-planfile-'), 'manifests');
    mkdirSync(dir);
    const r = await runCli(['apply', dir], env());
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(
      `Error: ${dir} is a manifest folder, not a plan saved with \`converge plan -out FILE\`. Manifest files and folders are given with -f; did you mean: converge apply -f ${dir}`,
    );
  });
});

describe('apply FILE of a plan saved by an older Converge', () => {
  it('says which Converge made it and to make it again, not that the manifest changed', async () => {
    const file = path.join(tempDir('converge-planfile-'), 'old.plan');
    writeFileSync(
      file,
      JSON.stringify({
        format: 'converge-plan',
        format_version: 1,
        converge_version: '0.1.0',
        manifest: [],
        changes: [],
      }),
    );
    const r = await runCli(['apply', file], env());
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `${file} has plan format 1, made by Converge 0.1.0; this Converge reads format 3: make the plan again with this Converge`,
    );
  });
});

describe('plan -out into a folder that does not exist', () => {
  it('is refused before the manifest or any service is read', async () => {
    const out = path.join(tempDir('converge-planfile-'), 'no', 'such', 'x.plan');
    // No manifest folder exists and no service is set: the -out check must come first to be seen.
    const r = await runCli(
      ['plan', '-f', path.join(tempDir('converge-planfile-'), 'absent'), '-out', out],
      env(),
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`-out ${out}: the folder ${path.dirname(out)} does not exist`);
    expect(r.stderr).not.toContain('no such file or folder');
    expect(r.stderr).not.toContain('Plan not saved');
  });

  it('is refused as a folder given for the file, before anything is read', async () => {
    const out = tempDir('converge-planfile-out-');
    const r = await runCli(
      ['plan', '-f', path.join(tempDir('converge-planfile-'), 'absent'), '-out', out],
      env(),
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `-out ${out} is a folder: give a file name (-out ${path.join(out, 'plan.bin')})`,
    );
    expect(r.stderr).not.toContain('EISDIR');
  });
});
