/**
 * Every problem of a manifest in one run, the files its objects name included: a job's spec file
 * and a workspace's state file are checked even when other documents have problems of their own (a
 * misplaced field, an object declared twice, an undeclared connection), and the problems come in
 * file order. `plan` refuses with the same list, before any service is asked.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { converge } from './helpers.js';
import { tempDir } from '../support/temp-dirs.js';

function folder(files: Record<string, string>): string {
  const dir = tempDir('converge-file-problems-');
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  return dir;
}

const job = (name: string, metadata = '') => `apiVersion: converge/v1
kind: Job
metadata: { name: ${name}${metadata} }
spec:
  specFile: ${name}.json
`;

const workspace = `apiVersion: converge/v1
kind: Workspace
metadata: { name: w1, namespace: sandbox }
spec:
  description: seeded
  state: seed.json
`;

const role = (name: string, extra = '') => `apiVersion: converge/v1
kind: AclRole
metadata: { name: ${name}, namespace: default }
${extra}spec:
  Description: ${name}
`;

/** A job file JSON.parse rejects without naming a position (an unexpected token). */
const BROKEN_JOB = '{"Job": {"ID": "web",\n "Type": }}';
const BROKEN_STATE = '{ "version": 4,\n  bad }';

/** Where each problem points, as `file:line:col`, in the order printed. */
function positions(stderr: string): string[] {
  return [...stderr.matchAll(/^\S*m\.yaml:(\d+):(\d+):/gm)].map((m) => `${m[1]}:${m[2]}`);
}

// No service is needed: every command below must stop at the manifest. The addresses point nowhere.
const ENV = {
  NO_COLOR: '1',
  CONVERGE_SCHEDULER_ADDR: 'http://127.0.0.1:9',
  CONVERGE_REGISTRY_ADDR: 'http://127.0.0.1:9',
  CONVERGE_WORKSPACES_ADDR: 'http://127.0.0.1:9',
  CONVERGE_SECRETS_ADDR: 'http://127.0.0.1:9',
};

describe('problems of the files objects name, beside the manifest’s own', () => {
  it('reports a bad job file and a bad state file with a misplaced field and a duplicate, in file order', async () => {
    const dir = folder({
      'web.json': BROKEN_JOB,
      'seed.json': BROKEN_STATE,
      'm.yaml': [job('web'), role('r1', 'connection: eu\n'), workspace, role('r2'), role('r2')].join('---\n'),
    });
    for (const command of ['validate', 'plan']) {
      const r = await converge([command, '-f', path.join(dir, 'm.yaml')], ENV);
      expect(r.code, command).toBe(1);
      expect(r.stderr, command).toContain('the manifest has 4 problems');
      expect(r.stderr).toMatch(/^\S*m\.yaml:5:13: web\.json: not valid JSON: .* \(at line 2, column 10\)$/m);
      expect(r.stderr).toMatch(/^\S*m\.yaml:10:1: unknown field "connection"/m);
      expect(r.stderr).toMatch(
        /^\S*m\.yaml:19:10: seed\.json: not a state file: not valid JSON \(at line 2, column 3\)$/m,
      );
      expect(r.stderr).toMatch(/^\S*m\.yaml:28:1: AclRole\/default\/r2 is declared twice/m);
      expect(positions(r.stderr), command).toEqual(['5:13', '10:1', '19:10', '28:1']);
      expect(r.stdout).not.toContain('will be created');
    }
  });

  it('reports a job file’s problem for a job on a connection that is not declared', async () => {
    const dir = folder({
      'web.json': BROKEN_JOB,
      'm.yaml': job('web', ', connection: eu'),
    });
    const r = await converge(['validate', '-f', path.join(dir, 'm.yaml')], ENV);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^\S*m\.yaml:3:\d+: connection "eu" is not declared/m);
    expect(r.stderr).toMatch(/^\S*m\.yaml:5:13: web\.json: not valid JSON/m);
  });

  it('orders problems by line as numbers, not as text (line 5 before line 19)', async () => {
    const dir = folder({
      'web.json': BROKEN_JOB,
      'seed.json': BROKEN_STATE,
      'm.yaml': [job('web'), role('r1'), workspace].join('---\n'),
    });
    const r = await converge(['validate', '-f', path.join(dir, 'm.yaml')], ENV);
    expect(r.code).toBe(1);
    expect(positions(r.stderr)).toEqual(['5:13', '18:10']);
  });
});

describe('files objects name, counted per object', () => {
  it('stops the copies at 64 MiB in all, with a problem at the objects past it, rather than parsing for minutes', async () => {
    // A 3 MiB job file named by twenty-five jobs: 75 MiB to parse and send.
    const big = JSON.stringify({ Job: { Meta: { pad: 'p'.repeat(3 * 1024 * 1024) } } });
    const files: Record<string, string> = { 'big.json': big };
    files['m.yaml'] = Array.from(
      { length: 25 },
      (_, i) =>
        `apiVersion: converge/v1\nkind: Job\nmetadata: { name: j${i} }\nspec:\n  specFile: big.json\n`,
    ).join('---\n');
    const r = await converge(['validate', '-f', folder(files)], ENV);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /big\.json: not read: the objects naming the same files would parse and send more than 64 MiB of copies of them in all/,
    );
  });
});
