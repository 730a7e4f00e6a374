/**
 * `apply --import` adopts and plans in one run: the manifest is read and validated once, one set of
 * connections serves both the adoption and the plan, and the inventory's lock is taken once. The
 * loads and the connection sets are counted by wrapping the two modules (passing everything through);
 * what the services receive is counted by the sandbox.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { tempDir } from '../support/temp-dirs.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';

const counted = vi.hoisted(() => ({ loads: 0, connectionSets: 0 }));

vi.mock('../../src/manifest/index.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/manifest/index.js')>();
  return {
    ...real,
    loadManifest: (...args: Parameters<typeof real.loadManifest>) => {
      counted.loads += 1;
      return real.loadManifest(...args);
    },
  };
});

vi.mock('../../src/engine/connections.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/engine/connections.js')>();
  class CountedConnections extends real.ServiceConnections {
    constructor(...args: ConstructorParameters<typeof real.ServiceConnections>) {
      super(...args);
      counted.connectionSets += 1;
    }
  }
  return { ...real, ServiceConnections: CountedConnections };
});

let sandbox: RunningSandbox;
let env: Record<string, string | undefined>;
let dir: string;
/** What the sandbox received, `METHOD path` a line. */
let received: string[] = [];

const role = (name: string, description: string) =>
  `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: ${name} }\nspec: { Description: ${description} }\n`;

beforeAll(async () => {
  sandbox = await startSandbox({
    port: 0,
    log: (line) => received.push(line.split(' ').slice(0, 2).join(' ')),
  });
  dir = tempDir('converge-import-once-');
  writeFileSync(path.join(dir, 'roles.yaml'), role('made-elsewhere', 'first'));
  // Made by an apply with an inventory of its own: live, but not in the inventory the test uses.
  const elsewhere = {
    ...sandbox.env(),
    CONVERGE_STATE_DIR: tempDir('converge-import-once-other-'),
  };
  const made = await runCli(['apply', '-f', dir, '--auto-approve'], elsewhere);
  expect(made.code, made.stderr).toBe(0);
  writeFileSync(path.join(dir, 'roles.yaml'), role('made-elsewhere', 'second'));
});
afterAll(async () => {
  await sandbox?.close();
});
beforeEach(() => {
  env = {
    ...sandbox.env(),
    NO_COLOR: '1',
    CONVERGE_STATE_DIR: tempDir('converge-import-once-state-'),
  };
  counted.loads = 0;
  counted.connectionSets = 0;
  received = [];
});

describe('apply --import', () => {
  it('loads the manifest once and plans over the connections it adopted with', async () => {
    const r = await runCli(
      ['apply', '-f', dir, '--auto-approve', '--import', 'AclRole/default/made-elsewhere'],
      env,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Imported AclRole/default/made-elsewhere');
    expect(r.stdout).toContain('~ AclRole/default/made-elsewhere');
    expect(counted.loads).toBe(1);
    // The inventory here is a local file: the one set is the services' own.
    expect(counted.connectionSets).toBe(1);
    // One read to adopt, one to plan, one write: nothing read twice for the run's second half.
    expect(received.filter((line) => line.startsWith('GET /v1/acl/role/name/made-elsewhere'))).toHaveLength(
      2,
    );
    expect(received.filter((line) => line.startsWith('PUT /v1/acl/role/'))).toHaveLength(1);
  });

  it('plan also loads once over one set of connections (the baseline the apply is held to)', async () => {
    const r = await runCli(['plan', '-f', dir], env);
    expect(r.code, r.stderr).toBe(0);
    expect(counted.loads).toBe(1);
    expect(counted.connectionSets).toBe(1);
  });

  it('refuses an undeclared address after one load and sends no write', async () => {
    const r = await runCli(
      ['apply', '-f', dir, '--auto-approve', '--import', 'AclRole/default/not-declared'],
      env,
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('cannot import AclRole/default/not-declared');
    expect(counted.loads).toBe(1);
    expect(received.filter((line) => !line.startsWith('GET '))).toEqual([]);
  });
});
