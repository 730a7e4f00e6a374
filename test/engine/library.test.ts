/**
 * The engine as an embedding program uses it, against the sandbox: validate without a service, plan
 * and apply over the run's one set of connections, a saved plan round trip; and the package entry
 * point, which must not load the CLI to offer all this.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  apply,
  connect,
  LocalInventory,
  loadManifest,
  plan,
  readPlanFile,
  reconcileSavedPlan,
  validate,
  verifyPlanFile,
  writePlanFile,
} from '../../src/engine/index.js';
import { ManifestError } from '../../src/manifest/types.js';
import { hasChanges } from '../../src/planner/types.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { tempDir } from '../support/temp-dirs.js';

let sandbox: RunningSandbox;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, config: { registry: { policies: [{ Name: 'service-read' }] } } });
  env = { ...sandbox.env(), CONVERGE_STATE_DIR: tempDir('converge-engine-') };
});
afterAll(async () => sandbox?.close());

function folder(description: string): string {
  const dir = tempDir('converge-engine-manifest-');
  writeFileSync(
    path.join(dir, 'roles.yaml'),
    `apiVersion: converge/v1
kind: AclRole
metadata: { name: engine-readers }
spec:
  Description: ${description}
  Policies: [{ Name: service-read }]
`,
  );
  return dir;
}

describe('the engine', () => {
  it('validates without a service, and keys objects with their effective namespace', async () => {
    const { desired } = await validate([folder('read')], { env: {} });
    expect(desired.map((d) => d.key)).toEqual([
      { kind: 'AclRole', name: 'engine-readers', namespace: 'default' },
    ]);
    await expect(validate([], { env })).rejects.toThrow('no manifest given');
  });

  it('plans and applies over the connections the run made once', async () => {
    const dir = folder('read access');
    const manifest = await loadManifest([dir], { env });
    const connections = connect(manifest, { env });
    try {
      const run = await plan(manifest, { env, connections });
      expect(run.connections).toBe(connections);
      expect(run.plan.summary).toMatchObject({ create: 1 });
      const result = await apply(run);
      expect(result.counts.applied).toBe(1);
      const again = await plan(manifest, { env, connections });
      expect(hasChanges(again.plan)).toBe(false);
      // One client per service for the whole run: both plans and the apply counted on it.
      expect(connections.requestCounts().registry).toBeGreaterThanOrEqual(5);
    } finally {
      await connections.close();
    }
  });

  it('saves a plan, verifies it with the state key and pairs it with a fresh plan', async () => {
    const dir = folder('edited');
    const inventory = new LocalInventory(env);
    const run = await plan([dir], { env, writeOnly: inventory });
    const file = path.join(tempDir('converge-engine-plan-'), 'plan.json');
    try {
      await writePlanFile(file, run.plan, {
        manifest: [dir],
        prune: false,
        version: 'test',
        digests: inventory,
        key: inventory.stateKey(),
      });
      const saved = await readPlanFile(file);
      verifyPlanFile(saved, file, inventory.existingStateKey(), 'no key');
      const paired = reconcileSavedPlan(saved, run.plan, { file, digests: inventory });
      expect(paired.summary).toEqual(run.plan.summary);
      expect(readFileSync(file, 'utf8')).toContain('"mac"');
    } finally {
      await run.connections.close();
    }
  });

  it('reports manifest problems as a ManifestError before any service is contacted', async () => {
    const dir = tempDir('converge-engine-bad-');
    writeFileSync(path.join(dir, 'bad.yaml'), 'apiVersion: converge/v1\nkind: AclRole\nmetadata: {}\n');
    await expect(plan([dir], { env: {} })).rejects.toBeInstanceOf(ManifestError);
  });
});

describe('the package entry point', () => {
  it('imports nothing from the CLI statically, and neither does the engine', () => {
    const source = readFileSync(path.join(import.meta.dirname, '../../src/index.ts'), 'utf8');
    expect(source).not.toMatch(/from '\.\/cli\//);
    const engineDir = path.join(import.meta.dirname, '../../src/engine');
    for (const file of readdirSync(engineDir)) {
      expect(readFileSync(path.join(engineDir, file), 'utf8'), file).not.toMatch(/from '\.\.\/cli\//);
    }
  });
});
