/**
 * The yes/no questions of inventory forget/unlock, workspace delete and job stop, asked on a
 * terminal in-process: input that ends (EOF) and "no" both cancel with 1 and change nothing; Ctrl-C
 * (key or signal) stops with 130; without a terminal each refuses, naming the flag that answers yes.
 * None of them waits forever.
 */
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/temp-dirs.js';
import { SchedulerClient } from '../../src/clients/scheduler/client.js';
import { STATE_LOCK_FILE } from '../../src/engine/state-lock.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { runAtTerminal } from '../support/run-at-terminal.js';

const ORG = 'prompt-org';
let sandbox: RunningSandbox;
let scheduler: SchedulerClient;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, config: { workspaces: { organizations: [{ name: ORG }] } } });
  scheduler = SchedulerClient.fromConnection({ address: sandbox.url, token: sandbox.rootToken });
});
afterAll(async () => {
  await scheduler?.close();
  await sandbox?.close();
});

function tmp(prefix: string): string {
  return tempDir(prefix);
}

function env(): Record<string, string> {
  return { ...sandbox.env(), CONVERGE_STATE_DIR: tmp('converge-prompt-state-'), NO_COLOR: '1' };
}

function manifest(yaml: string): string {
  const dir = tmp('converge-prompt-manifest-');
  writeFileSync(path.join(dir, 'm.yaml'), yaml);
  return dir;
}

const eof = (k: PassThrough) => k.end();
const no = (k: PassThrough) => k.write('n\r');
const ctrlC = (k: PassThrough) => k.write('\x03');
const sigint = () => process.emit('SIGINT', 'SIGINT');

/** Each way of not saying yes, with what the command must exit with and say. */
const notYes = [
  { how: 'input ends (EOF)', answer: eof, code: 1, said: 'Cancelled' },
  { how: 'the answer is no', answer: no, code: 1, said: 'Cancelled' },
  { how: 'Ctrl-C is typed', answer: ctrlC, code: 130, said: 'Interrupted' },
  { how: 'SIGINT arrives', answer: sigint, code: 130, said: 'Interrupted' },
];

describe('inventory forget asks first', () => {
  let state: Record<string, string>;
  const address = 'AclRole/default/prompt-forget';
  beforeAll(async () => {
    state = env();
    const roles = manifest(
      'apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: prompt-forget }\nspec: { Description: d }\n',
    );
    expect((await runCli(['apply', '-f', roles, '--auto-approve'], state)).code).toBe(0);
  });

  for (const { how, answer, code, said } of notYes) {
    it(`keeps the object and releases the lock when ${how}`, async () => {
      const r = await runAtTerminal(['inventory', 'forget', address], state, `Forget ${address}?`, answer);
      expect(r.asked).toBe(true);
      expect(r.code, r.stderr).toBe(code);
      expect(r.stderr).toContain(`${said}; the inventory is unchanged.`);
      expect((await runCli(['inventory', 'show', address], state)).code).toBe(0);
      expect(existsSync(path.join(state.CONVERGE_STATE_DIR!, STATE_LOCK_FILE))).toBe(false);
    });
  }

  it('forgets on yes', async () => {
    const own = env();
    const roles = manifest(
      'apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: prompt-forget-yes }\nspec: { Description: d }\n',
    );
    expect((await runCli(['apply', '-f', roles, '--auto-approve'], own)).code).toBe(0);
    const target = 'AclRole/default/prompt-forget-yes';
    const r = await runAtTerminal(['inventory', 'forget', target], own, 'Forget', (k) => k.write('y\r'));
    expect(r.code, r.stderr).toBe(0);
    expect((await runCli(['inventory', 'show', target], own)).code).toBe(1);
  });
});

describe('inventory unlock asks first', () => {
  /** A lock held from another host: whether its run is gone cannot be checked, so it asks. */
  function lockedElsewhere(): { state: Record<string, string>; lock: string } {
    const state = env();
    const lock = path.join(state.CONVERGE_STATE_DIR!, STATE_LOCK_FILE);
    const holder = {
      pid: 4242,
      host: 'elsewhere.invalid',
      command: 'converge apply',
      since: '2030-01-01T00:00:00Z',
    };
    writeFileSync(lock, `${JSON.stringify(holder)}\n`);
    return { state, lock };
  }

  for (const { how, answer, code, said } of notYes) {
    it(`keeps the lock when ${how}`, async () => {
      const { state, lock } = lockedElsewhere();
      const r = await runAtTerminal(['inventory', 'unlock'], state, 'Delete the lock', answer);
      expect(r.asked).toBe(true);
      expect(r.code, r.stderr).toBe(code);
      expect(r.stderr).toContain(`${said}; the lock is still held.`);
      expect(existsSync(lock)).toBe(true);
    });
  }

  it('without a terminal: refuses and names --yes', async () => {
    const { state, lock } = lockedElsewhere();
    const r = await runCli(['inventory', 'unlock'], state);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('no terminal to ask on. Pass --yes');
    expect(existsSync(lock)).toBe(true);
  });
});

describe('workspace delete asks first', () => {
  let state: Record<string, string>;
  beforeAll(async () => {
    state = env();
    const ws = manifest(
      `apiVersion: converge/v1\nkind: Workspace\nmetadata: { name: prompt-ws, namespace: ${ORG} }\nspec: { description: d }\n`,
    );
    const made = await runCli(['apply', '-f', ws, '--auto-approve'], state);
    expect(made.code, made.stderr).toBe(0);
  });

  for (const { how, answer, code, said } of notYes) {
    it(`deletes nothing when ${how}`, async () => {
      const r = await runAtTerminal(
        ['workspace', 'delete', `${ORG}/prompt-ws`],
        state,
        'safe-delete workspace',
        answer,
      );
      expect(r.asked).toBe(true);
      expect(r.code, r.stderr).toBe(code);
      expect(r.stderr).toContain(`${said}; nothing was deleted.`);
      expect((await runCli(['workspace', 'show', `${ORG}/prompt-ws`], state)).code).toBe(0);
    });
  }

  it('takes --yes, as job stop and inventory forget do, and says so without a terminal', async () => {
    const refused = await runCli(['workspace', 'delete', `${ORG}/prompt-ws`], state);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('without confirmation: pass --yes');
    const deleted = await runCli(['workspace', 'delete', `${ORG}/prompt-ws`, '--yes'], state);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect((await runCli(['workspace', 'show', `${ORG}/prompt-ws`], state)).code).not.toBe(0);
  });
});

describe('job stop asks first', () => {
  const id = 'prompt-job';
  beforeAll(async () => {
    await scheduler.registerJob({
      ID: id,
      Name: id,
      Type: 'service',
      Datacenters: ['dc1'],
      TaskGroups: [
        {
          Name: 'api',
          Count: 1,
          Tasks: [
            {
              Name: 's',
              Driver: 'docker',
              Config: { image: 'nginx:1.25' },
              Resources: { CPU: 100, MemoryMB: 64 },
            },
          ],
        },
      ],
    });
  });

  for (const { how, answer, code, said } of notYes) {
    it(`stops nothing when ${how}`, async () => {
      const r = await runAtTerminal(['job', 'stop', id], env(), `stop job ${id}`, answer);
      expect(r.asked).toBe(true);
      expect(r.code, r.stderr).toBe(code);
      expect(r.stderr).toContain(`${said}; job ${id} was not stopped.`);
      // One handler hears the signal: its line is said once, not once per listener.
      expect(r.stderr.split('Interrupted (SIGINT)').length).toBeLessThanOrEqual(2);
      expect((await scheduler.readJob(id))!.Stop).toBeFalsy();
    });
  }
});

describe('a secret asked at a hidden prompt (ldap login, rekey submit)', () => {
  it('takes an answer that input ends right behind, in the same chunk', async () => {
    const r = await runAtTerminal(
      ['ldap', 'login', 'alice', '--mount', 'no-such-mount'],
      env(),
      'Password for alice:',
      (k) => k.write('hunter2\r\x04'),
    );
    expect(r.asked).toBe(true);
    // Sent: the service's answer (no such mount here), not "no password was given".
    expect(r.stderr).not.toContain('cancelled');
    expect(r.stderr).toContain('is the directory auth method mounted at auth/no-such-mount?');
  });

  const ctrlD = (k: PassThrough) => k.write('\x04');
  const ways = [
    {
      how: 'input ends (EOF)',
      answer: eof,
      code: 1,
      said: 'cancelled: no password was given, so none was sent',
    },
    {
      how: 'Ctrl-D is typed',
      answer: ctrlD,
      code: 1,
      said: 'cancelled: no password was given, so none was sent',
    },
    { how: 'Ctrl-C is typed', answer: ctrlC, code: 130, said: 'interrupted: no password was sent' },
    { how: 'SIGINT arrives', answer: sigint, code: 130, said: 'interrupted: no password was sent' },
  ];
  for (const { how, answer, code, said } of ways) {
    // Before, Ctrl-D left the prompt waiting: Node exited 13 with nothing said.
    it(`ends with ${code} and says so when ${how}`, async () => {
      const r = await runAtTerminal(['ldap', 'login', 'alice'], env(), 'Password for alice:', answer);
      expect(r.asked).toBe(true);
      expect(r.code, r.stderr).toBe(code);
      expect(r.stderr).toContain(said);
    });
  }
});
