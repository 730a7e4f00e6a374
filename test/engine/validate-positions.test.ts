/**
 * `converge validate` asks no position of a manifest once it is valid, so it validates with
 * `positionsOnlyForProblems`: a plain manifest is read by the fast parse alone and yaml (the
 * position-keeping parser) is never loaded. What must hold: every problem still carries the line and
 * column a full read gives (problems found after the fast parse too: an object declared twice, a
 * connection that is not declared, a Connection's address the operator did not allow), and a valid
 * manifest leaves the parser unloaded. Each test imports the engine afresh: whether the parser was
 * loaded is the module's state, and an earlier test would otherwise have loaded it.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { tempDir } from '../support/temp-dirs.js';

type Engine = typeof import('../../src/engine/validate.js');
type Manifests = typeof import('../../src/manifest/index.js');

async function freshEngine(): Promise<{ engine: Engine; manifests: Manifests }> {
  vi.resetModules();
  return {
    engine: await import('../../src/engine/validate.js'),
    manifests: await import('../../src/manifest/index.js'),
  };
}

const makeDir = () => tempDir('converge-validate-positions-');
let dir: string;
beforeEach(() => {
  dir = makeDir();
});

const role = (name: string, extra = '') =>
  `apiVersion: converge/v1\nkind: AclRole\nmetadata:\n  name: ${name}\n${extra}spec:\n  Description: ${name}\n`;

/** A Connection whose token comes from outside the manifest, to an address no one allowed (line 7). */
const CONNECTION = [
  'apiVersion: converge/v1',
  'kind: Connection',
  'metadata:',
  '  name: other',
  'spec:',
  '  service: registry',
  '  address: http://198.51.100.7:8500',
  '  token: ${env:OTHER_TOKEN}',
  '',
].join('\n');

/** The problems `validate` reports, as `file:line:col message` lines, with or without deferred positions. */
async function problemsOf(positionsOnlyForProblems: boolean, env: NodeJS.ProcessEnv = {}): Promise<string[]> {
  const { engine, manifests } = await freshEngine();
  try {
    await engine.validate([dir], { env, positionsOnlyForProblems });
  } catch (error) {
    if (!(error instanceof manifests.ManifestError)) throw error;
    return error.problems.map((p) => `${manifests.formatPosition(p.position)} ${p.message}`);
  }
  throw new Error('the manifest validated');
}

describe('validate with positions only for problems', () => {
  it('leaves the position-keeping parser unloaded for a valid plain manifest, and loads it otherwise', async () => {
    writeFileSync(path.join(dir, 'roles.yaml'), `${role('web')}---\n${role('api')}`);
    const deferred = await freshEngine();
    const valid = await deferred.engine.validate([dir], { env: {}, positionsOnlyForProblems: true });
    expect(valid.manifest.resources.map((r) => r.name)).toEqual(['web', 'api']);
    expect(deferred.manifests.positionParserLoaded()).toBe(false);

    const eager = await freshEngine();
    await eager.engine.validate([dir], { env: {} });
    expect(eager.manifests.positionParserLoaded()).toBe(true);
  });

  it('points at the second declaration of an object declared twice, line and column, as a full read does', async () => {
    writeFileSync(path.join(dir, 'a.yaml'), role('web'));
    // The duplicate sits below a comment and another document. An object's place is its `kind:` line.
    writeFileSync(path.join(dir, 'b.yaml'), `# roles\n${role('api')}---\n${role('web')}`);
    const deferred = await problemsOf(true);
    expect(deferred).toEqual(await problemsOf(false));
    expect(deferred).toEqual([
      `${path.join(dir, 'b.yaml')}:10:1 AclRole/default/web is declared twice: at ${path.join(dir, 'a.yaml')}:2:1 and at ${path.join(dir, 'b.yaml')}:10:1`,
    ]);
  });

  it('reports a duplicate in the same run as the other problems of either copy', async () => {
    // A copied document with a typo in its spec: the typo and the duplicate at once, not the
    // duplicate only once the typo is fixed; also where one copy leaves the default namespace out.
    writeFileSync(
      path.join(dir, 'a.yaml'),
      `${role('web')}---\n${role('web', '  namespace: default\n').replace('spec:\n', 'spec:\n  Polices: []\n')}---\n${role('api', '  namespace: [x]\n')}---\n${role('api')}`,
    );
    for (const deferred of [true, false]) {
      const problems = await problemsOf(deferred);
      const file = path.join(dir, 'a.yaml');
      expect(problems).toContain(
        `${file}:9:1 AclRole/default/web is declared twice: at ${file}:2:1 and here (one names the default namespace, the other leaves it out)`,
      );
      expect(problems.some((p) => p.includes('unknown field "Polices"'))).toBe(true);
      // A copy whose metadata does not say who it is (a namespace that is no string) is no duplicate.
      expect(problems.filter((p) => p.includes('declared twice'))).toHaveLength(1);
    }
  });

  it('points at the files objects name in a run whose other problems the fast parse leaves to a full read', async () => {
    // Each file is plain (read by the fast parse alone); the duplicate and the connection not declared
    // are found across files, and the spec file and state file problems are reported with them.
    const workspace = (name: string, spec: string) =>
      `apiVersion: converge/v1\nkind: Workspace\nmetadata:\n  name: ${name}\n  namespace: acme\nspec:\n  ${spec}\n`;
    writeFileSync(
      path.join(dir, 'a.yaml'),
      `${workspace('w', 'description: x')}---\n${workspace('v', 'state: v.tfstate')}`,
    );
    writeFileSync(
      path.join(dir, 'b.yaml'),
      `${role('web', '  connection: elsewhere\n')}---\n${workspace('w', 'description: y')}---\napiVersion: converge/v1\nkind: Job\nmetadata:\n  name: j\nspec:\n  specFile: j.hcl\n`,
    );
    const deferred = await problemsOf(true);
    expect(deferred).toEqual(await problemsOf(false));
    const a = path.join(dir, 'a.yaml');
    const b = path.join(dir, 'b.yaml');
    expect(deferred).toEqual([
      `${a}:15:10 cannot read state file v.tfstate: no such file`,
      `${b}:5:15 connection "elsewhere" is not declared; add a Connection document with that name (no registry connection is declared)`,
      `${b}:10:1 Workspace/acme/w is declared twice: at ${a}:2:1 and at ${b}:10:1`,
      `${b}:22:13 j.hcl: no such file`,
    ]);
  });

  it('points at metadata.connection naming a connection that is not declared, not at the document', async () => {
    writeFileSync(path.join(dir, 'roles.yaml'), role('web', '  connection: elsewhere\n'));
    const deferred = await problemsOf(true);
    expect(deferred).toEqual(await problemsOf(false));
    expect(deferred).toHaveLength(1);
    expect(deferred[0]).toMatch(/roles\.yaml:5:15 connection "elsewhere" is not declared/);
  });

  it("points at a Connection's address even when a later file loads the parser part-way", async () => {
    // The Connection is read by the fast parse; the role after it (an anchor) by the position-keeping
    // one, which loads the parser only then.
    writeFileSync(path.join(dir, 'a.yaml'), CONNECTION);
    writeFileSync(
      path.join(dir, 'b.yaml'),
      'apiVersion: converge/v1\nkind: AclRole\nmetadata:\n  name: &n web\nspec:\n  Description: *n\n',
    );
    const env = { CONVERGE_ALLOW_ENV: 'OTHER_TOKEN', OTHER_TOKEN: 'not-shown' };
    const deferred = await problemsOf(true, env);
    expect(deferred).toEqual(await problemsOf(false, env));
    expect(deferred).toHaveLength(1);
    expect(deferred[0]).toMatch(/a\.yaml:7:12 connection "other" takes its token from outside/);
  });

  it("points at a Connection's address the operator did not allow", async () => {
    writeFileSync(path.join(dir, 'connections.yaml'), CONNECTION);
    const env = { CONVERGE_ALLOW_ENV: 'OTHER_TOKEN', OTHER_TOKEN: 'not-shown' };
    const deferred = await problemsOf(true, env);
    expect(deferred).toEqual(await problemsOf(false, env));
    expect(deferred).toHaveLength(1);
    expect(deferred[0]).toMatch(/connections\.yaml:7:12 connection "other" takes its token from outside/);
    expect(deferred.join('\n')).not.toContain('not-shown');
  });
});
