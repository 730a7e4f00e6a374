/**
 * Nothing is written before the manifest validates: an apply of a manifest `validate` refuses leaves
 * no `.converge/` folder (the apply lock's), wherever the state folder is, and makes no workspace
 * inventory on the service (taking a workspace's lock makes it). The lock used to be taken before the
 * manifest was loaded, and a new user's invalid first apply left an empty `.converge/` behind (found
 * by a new-user trial). `validate` and `plan` already wrote nothing.
 */
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runReconcile } from '../../src/reconcile/loop.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';
import { converge } from './helpers.js';

let sandbox: RunningSandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
});
afterAll(async () => {
  await sandbox?.close();
});

function manifest(text: string): string {
  const dir = tempDir('converge-refused-');
  writeFileSync(path.join(dir, 'bad.yaml'), text);
  return dir;
}

/** One reconcile cycle of `paths` (the wait after it stops the loop): its JSON log lines. */
async function oneCycle(
  paths: string[],
  env: Record<string, string | undefined>,
  dryRun = false,
): Promise<Record<string, unknown>[]> {
  const lines: string[] = [];
  const stop = new AbortController();
  const loop = await runReconcile(
    { paths, intervalMs: 60_000, dryRun, env, signal: stop.signal, sleep: async () => stop.abort('SIGTERM') },
    { stdout: { write: (t: string) => lines.push(t) } },
  );
  await loop.done;
  return lines
    .join('')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** A typo in the spec: the load refuses it. */
const TYPO = 'apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: r1 }\nspec: { Descripton: x }\n';

/**
 * One role declared twice, once in `default` and once without a namespace: only keying finds it (the
 * load compares keys as written), as the plan does.
 */
const TWICE =
  'apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: r2 }\nspec: { Description: x }\n---\n' +
  'apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: r2, namespace: default }\nspec: { Description: x }\n';

/** A job whose spec file is not there: validate reads the files objects name, and so must apply. */
const MISSING_FILE =
  'apiVersion: converge/v1\nkind: Job\nmetadata: { name: web }\nspec: { specFile: jobs/nope.hcl }\n';

describe('apply of a manifest validate refuses', () => {
  it.each([
    ['a typo the load finds', TYPO, 'unknown field "Descripton" in spec'],
    ['an object declared twice that keying finds', TWICE, 'AclRole/default/r2 is declared twice'],
    ['a spec file that is not there', MISSING_FILE, 'nope.hcl'],
  ])('%s: creates no state folder (CONVERGE_STATE_DIR)', async (_, text, problem) => {
    const dir = manifest(text);
    const state = path.join(tempDir('converge-refused-state-'), 'state');
    const env = { ...sandbox.env(), NO_COLOR: '1', CONVERGE_STATE_DIR: state };
    const validated = await runCli(['validate', '-f', dir], env);
    expect(validated.code).toBe(1);
    expect(validated.stderr).toContain(problem);
    const applied = await runCli(['apply', '-f', dir, '--auto-approve'], env);
    expect(applied.code).toBe(1);
    expect(applied.stderr).toBe(validated.stderr);
    expect(existsSync(state)).toBe(false);
  });

  it('creates no .converge/ folder in the working folder (the default state folder)', async () => {
    const cwd = tempDir('converge-refused-cwd-');
    writeFileSync(path.join(cwd, 'bad.yaml'), TYPO);
    const applied = await converge(['apply', '-f', 'bad.yaml', '--auto-approve'], { NO_COLOR: '1' }, cwd);
    expect(applied.code).toBe(1);
    expect(applied.stderr).toContain('unknown field "Descripton" in spec');
    expect(readdirSync(cwd)).toEqual(['bad.yaml']);
  });

  it('makes no workspace inventory on the service (CONVERGE_INVENTORY)', async () => {
    const dir = manifest(TYPO);
    const state = path.join(tempDir('converge-refused-state-'), 'state');
    const env = {
      ...sandbox.env(),
      NO_COLOR: '1',
      CONVERGE_STATE_DIR: state,
      CONVERGE_INVENTORY: 'workspace:sandbox/converge-refused',
    };
    const applied = await runCli(['apply', '-f', dir, '--auto-approve'], env);
    expect(applied.code).toBe(1);
    expect(applied.stderr).toContain('unknown field "Descripton" in spec');
    const read = await fetch(`${sandbox.url}/api/v2/organizations/sandbox/workspaces/converge-refused`, {
      headers: { Authorization: `Bearer ${sandbox.rootToken}` },
    });
    expect(read.status).toBe(404);
    expect(existsSync(state)).toBe(false);
  });
});

describe('a reconcile cycle of a manifest validate refuses', () => {
  it('takes no lock: no state folder, no workspace inventory, and the cycle says why it failed', async () => {
    const dir = manifest(TYPO);
    const state = path.join(tempDir('converge-refused-state-'), 'state');
    const log = await oneCycle([dir], {
      ...sandbox.env(),
      CONVERGE_STATE_DIR: state,
      CONVERGE_INVENTORY: 'workspace:sandbox/converge-refused-loop',
    });
    const cycle = log.find((l) => l.type === 'cycle');
    expect(cycle).toMatchObject({ outcome: 'failed' });
    expect(String(cycle?.error)).toContain('unknown field "Descripton" in spec');
    const read = await fetch(`${sandbox.url}/api/v2/organizations/sandbox/workspaces/converge-refused-loop`, {
      headers: { Authorization: `Bearer ${sandbox.rootToken}` },
    });
    expect(read.status).toBe(404);
    expect(existsSync(state)).toBe(false);
  });
});

/** A role to plan beside a job whose spec file is not there. */
function roleBesideMissingFile(role: string): string {
  const dir = tempDir('converge-refused-partial-');
  writeFileSync(
    path.join(dir, 'm.yaml'),
    `${MISSING_FILE}---\napiVersion: converge/v1\nkind: AclRole\nmetadata: { name: ${role} }\nspec: { Description: x }\n`,
  );
  return dir;
}

describe('the files checked before the lock', () => {
  it('are only those of the objects --target selects: a saved plan of other objects still applies', async () => {
    const dir = roleBesideMissingFile('partial-role');
    const env = { ...sandbox.env(), NO_COLOR: '1', CONVERGE_STATE_DIR: tempDir('converge-partial-state-') };
    const saved = path.join(tempDir('converge-partial-plan-'), 'roles.plan');
    const planned = await runCli(['plan', '-f', dir, '--target', 'AclRole/**', '-out', saved], env);
    expect([planned.code, planned.stderr]).toEqual([0, '']);
    const applied = await runCli(['apply', saved], env);
    expect(applied.stderr).toBe('');
    expect(applied.code).toBe(0);
    expect(applied.stdout).toContain('1 applied');
  });

  it("leave a reconcile cycle to report the other objects' drift with the missing file", async () => {
    const dir = roleBesideMissingFile('drifting-role');
    const log = await oneCycle(
      [dir],
      { ...sandbox.env(), CONVERGE_STATE_DIR: tempDir('converge-partial-loop-') },
      true,
    );
    expect(log.find((l) => l.type === 'change')).toMatchObject({ address: 'AclRole/default/drifting-role' });
    const cycle = log.find((l) => l.type === 'cycle');
    expect(cycle).toMatchObject({ outcome: 'failed' });
    expect(String(cycle?.error)).toContain('nope.hcl');
  });
});
