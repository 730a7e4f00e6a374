/**
 * Adding a service is one module on each side: a throwaway "notes" service (sandbox module, client
 * definition, kind, commands; see ./notes-service.ts) is planned and applied by the real CLI code
 * without any shared file knowing it. The same kind carries a write-only and a nested sensitive
 * attribute, so this is also where Converge proves that a planted secret reaches no output.
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog } from '../../src/engine/catalog.js';
import type { Io } from '../../src/cli/io.js';
import { run } from '../../src/cli/program.js';
import { SERVICE_MODULES } from '../../src/engine/services.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { SANDBOX_SERVICES } from '../../src/sandbox/services/index.js';
import { notesModule, notesSandbox, notesWrites } from './notes-service.js';
import { tempDir } from '../support/temp-dirs.js';

const SECRET = 'planted-secret-6f1e9a2c47';
const API_KEY = 'planted-apikey-0b8d3e5f19';

let sandbox: RunningSandbox;
let stateDir: string;
const catalog = new Catalog([...SERVICE_MODULES, notesModule]);

beforeAll(async () => {
  sandbox = await startSandbox({ services: [...SANDBOX_SERVICES, notesSandbox] });
  stateDir = tempDir('converge-notes-state-');
});
afterAll(async () => sandbox.close());

function capture(): Writable & { text: string } {
  const stream = new Writable({
    write(chunk, _enc, done) {
      stream.text += String(chunk);
      done();
    },
  }) as Writable & { text: string };
  stream.text = '';
  return stream;
}

async function converge(args: string[], env: Record<string, string> = {}) {
  const stdout = capture();
  const stderr = capture();
  const io: Io = {
    stdout,
    stderr,
    stdinIsTTY: false,
    env: { ...sandbox.env(), CONVERGE_STATE_DIR: stateDir, ...env },
  };
  const code = await run(args, io, catalog);
  return { code, stdout: stdout.text, stderr: stderr.text };
}

function manifest(text: string, secret = SECRET, apiKey = API_KEY): string {
  const dir = tempDir('converge-notes-');
  writeFileSync(
    path.join(dir, 'notes.yaml'),
    `apiVersion: converge/v1
kind: Note
metadata: { name: shopping }
spec:
  Text: ${text}
  Tags: [home]
  Secret: ${secret}
  Auth: { User: me, ApiKey: ${apiKey} }
`,
  );
  return dir;
}

describe('a service added as one module', () => {
  it('exports its variables from the sandbox and is planned, applied and listed by the CLI', async () => {
    expect(sandbox.env().CONVERGE_NOTES_ADDR).toBe(sandbox.url);
    const dir = manifest('milk');
    const applied = await converge(['apply', '-f', dir, '--auto-approve']);
    expect(applied.stderr).toBe('');
    expect(applied.code).toBe(0);
    const plan = JSON.parse((await converge(['plan', '-f', dir, '--json'])).stdout);
    expect(plan.summary).toMatchObject({ noop: 1, create: 0, update: 0 });
    expect((await converge(['notes'])).stdout.trim()).toBe('shopping');
  });
});

describe('write-only attributes', () => {
  it('never re-sends an unchanged secret, and shows a changed one without its value', async () => {
    const dir = manifest('milk');
    await converge(['apply', '-f', dir, '--auto-approve']);
    notesWrites.length = 0;

    const textOnly = manifest('bread');
    const plan = JSON.parse((await converge(['plan', '-f', textOnly, '--json'])).stdout);
    expect(plan.changes[0].diffs.map((d: { path: string }) => d.path)).toEqual(['Text']);
    expect((await converge(['apply', '-f', textOnly, '--auto-approve'])).code).toBe(0);
    expect(notesWrites).toHaveLength(1);
    expect(notesWrites[0]).not.toHaveProperty('Secret');

    const newSecret = manifest('bread', 'another-secret-77');
    const human = await converge(['plan', '-f', newSecret, '--no-color']);
    expect(human.stdout).toContain('~ Secret = (sensitive value changed)');
    expect(human.stdout).not.toContain('another-secret-77');
    expect((await converge(['apply', '-f', newSecret, '--auto-approve'])).code).toBe(0);
    expect(notesWrites.at(-1)).toMatchObject({ Secret: 'another-secret-77' });
    expect((await converge(['plan', '-f', newSecret, '--detailed-exitcode'])).code).toBe(0);

    // The digests live in a 0600 file beside a 0600 key, and hold no secret.
    const inventory = path.join(stateDir, 'inventory.json');
    expect(statSync(inventory).mode & 0o777).toBe(0o600);
    expect(statSync(path.join(stateDir, 'state.key')).mode & 0o777).toBe(0o600);
    expect(readFileSync(inventory, 'utf8')).not.toContain('another-secret-77');
  });

  it('clears a secret Converge set once the manifest drops it, and then plans no change', async () => {
    const dir = manifest('jam', 'dropped-later-31');
    expect((await converge(['apply', '-f', dir, '--auto-approve'])).code).toBe(0);
    const withoutSecret = tempDir('converge-notes-');
    writeFileSync(
      path.join(withoutSecret, 'notes.yaml'),
      readFileSync(path.join(dir, 'notes.yaml'), 'utf8').replace(/^ {2}Secret: .*\n/m, ''),
    );
    const plan = JSON.parse((await converge(['plan', '-f', withoutSecret, '--json'])).stdout);
    expect(plan.changes[0].action).toBe('update');
    expect(plan.changes[0].diffs).toEqual([
      expect.objectContaining({ path: 'Secret', op: 'remove', sensitive: true }),
    ]);
    notesWrites.length = 0;
    expect((await converge(['apply', '-f', withoutSecret, '--auto-approve'])).code).toBe(0);
    expect(notesWrites).toEqual([expect.objectContaining({ Secret: '' })]);
    // Nothing recorded any more, so nothing to clear again.
    expect((await converge(['plan', '-f', withoutSecret, '--detailed-exitcode'])).code).toBe(0);
  });
});

describe('a planted secret', () => {
  it('appears in no plan, saved plan, apply output or error', async () => {
    const outputs: Record<string, string> = {};
    const record = (name: string, r: { stdout: string; stderr: string }) => {
      outputs[`${name} (stdout)`] = r.stdout;
      outputs[`${name} (stderr)`] = r.stderr;
    };
    // A fresh secret and key: a create shows every attribute, an update the changed ones.
    const created = manifest('eggs', `${SECRET}-new`, `${API_KEY}-new`);
    const planFile = path.join(tempDir('converge-notes-plan-'), 'plan.json');
    record('plan', await converge(['plan', '-f', created, '--no-color']));
    record('plan --json', await converge(['plan', '-f', created, '--json']));
    record('plan --markdown', await converge(['plan', '-f', created, '--markdown']));
    record('plan -out', await converge(['plan', '-f', created, '-out', planFile]));
    outputs['saved plan file'] = readFileSync(planFile, 'utf8');
    record('apply FILE', await converge(['apply', planFile]));
    // The service refuses this one and echoes the secret and key back in its error.
    const failing = manifest('fail', `${SECRET}-fail`, `${API_KEY}-fail`);
    const failed = await converge(['apply', '-f', failing, '--auto-approve']);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('refused a note with secret (sensitive value)');
    record('failed apply', failed);

    expect(outputs['plan (stdout)']).toContain('(sensitive value');
    for (const [name, text] of Object.entries(outputs)) {
      for (const planted of [SECRET, API_KEY]) {
        expect(text.includes(planted), `${name} shows a planted secret`).toBe(false);
      }
    }
  });
});
