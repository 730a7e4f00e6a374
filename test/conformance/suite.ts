/**
 * The kind conformance suite: the behaviour every resource kind owes its users, checked the way users
 * meet it. Each kind's test file calls `runKindConformance` with a `ConformanceCase`; the suite starts
 * the in-process sandbox on a free loopback port and drives the real CLI (`run` from
 * src/cli/program.ts, in-process, output captured, no terminal) through manifest → validate → plan →
 * apply, reading `plan --json` to check actions and diffs. It goes behind Converge's back only through
 * the service's own client, the way another person or tool would.
 *
 * The rules, each one `it`, each on its own objects so one failure does not hide the others:
 *  1. create converges: apply creates the object, and the next plan is `noop` (`--detailed-exitcode` 0)
 *  2. a manifest change is an in-place update with an attribute diff on that field, then `noop`
 *  3. drift made through the service's client is planned as an update on that field and repaired
 *  4. `list` agrees with `observe`: same key, id, version and `describe()` (once read whole where the
 *     kind has `readWhole`), also after drift
 *  5. prune deletes only what the kind owns and the manifest dropped; never an object it does not own
 *  6. `metadata.ensure: absent` deletes the object, and then plans `noop`
 *  7. a planted secret (the connection's token, and the kind's sensitive attribute if it has one)
 *     appears in no output: plan (text, --json, --markdown), a saved plan file, apply, error runs
 *  8. each capability group the kind declares holds (one `it` per group): a Versioned kind refuses
 *     an update against a stale version, a ServerSidePlan kind calls nothing up to date without the
 *     service's plan, SpecRules accept the case's valid spec, LocalFiles name spec fields, every
 *     ApplySwitches flag is offered by `apply --help`, Dependencies are complete keys of known kinds,
 *     a kind with secret attributes plants one in rule 7, a kind with list attributes
 *     (RenderDetails.listAttributes) holds each live list whole in a plan's `before`
 *
 * Every assertion message starts `[conformance <Kind>] rule N (<rule>)`, so a failure names the rule
 * and the kind. Rule 7's check runs on every CLI run of the suite, since every run holds the token.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { CliCatalog as Catalog } from '../../src/cli/service-module.js';
import { ServiceConnections } from '../../src/engine/connections.js';
import type { Io } from '../../src/cli/io.js';
import { run } from '../../src/cli/program.js';
import { defaultCatalog } from '../../src/engine/services.js';
import { envVarPrefix } from '../../src/common/types.js';
import type { PlanJson } from '../../src/planner/render/json.js';
import {
  type AnyResourceKind,
  addressOf,
  type Desired,
  hasApplySwitches,
  hasDependencies,
  hasLocalFiles,
  hasSensitiveAttributes,
  hasServerSidePlan,
  hasSpecRules,
  isListable,
  isNamespaced,
  isPrunable,
  isVersioned,
  liveAttributes,
  listAttributesOf,
  namespaceFieldOf,
  type Observed,
  type ResourceKey,
  writeOnlyPaths,
} from '../../src/resources/contract.js';
import { type RunningSandbox, type SandboxConfig, startSandbox } from '../../src/sandbox/index.js';
import { tempDir } from '../support/temp-dirs.js';

/** What a case's callbacks get to act on a live object directly, as someone other than Converge. */
export interface LiveTarget {
  /** Clients on the sandbox, from its environment: `ctx.client(registryService)`. */
  ctx: ServiceConnections;
  key: ResourceKey;
  /** The object as the kind's `observe` reads it. */
  observed: Observed;
}

export interface ForeignTarget {
  ctx: ServiceConnections;
  /** The object to create: its name (chosen by the suite) and namespace. */
  key: ResourceKey;
}

export interface ConformanceCase {
  /** The manifest `kind:` under test; it must be in the catalog. */
  kind: string;
  /** Default: the catalog Converge ships. */
  catalog?: Catalog;
  /** Sandbox config the objects need (policies a role links to, an organization). */
  sandbox?: SandboxConfig;
  /**
   * The namespace the objects are declared in (explicitly, in every document, under the kind's
   * `namespaceField`); leave it out for kinds without namespaces.
   */
  namespace?: string;
  /** A valid `spec` for a new object named `name`; called once per object, so return a fresh one. */
  spec(name: string): Record<string, unknown>;
  /** Rule 2: the manifest field to change (a dotted path into `spec`) and its new value. */
  change: { field: string; value: unknown };
  /**
   * Rule 3: change the live object behind Converge's back, through the service's client, so that it
   * no longer matches the manifest at `field` (a dotted spec path; the plan must diff there).
   */
  drift: { field: string; apply(target: LiveTarget): Promise<void> };
  /**
   * Rule 5: create an object of this kind through the service's client that Converge does not own:
   * for marker kinds, without the ownership marker (the suite gives it a name inside our naming,
   * so only the marker can tell); for declared-scope kinds, the suite picks a name outside the
   * PruneScope's `namePrefix`. Kinds that are never pruned (no `ownership`) may leave it out.
   */
  foreign?(target: ForeignTarget): Promise<void>;
  /**
   * Rule 7, for kinds with `sensitive` or `writeOnly` attributes: a dotted spec path (objects only)
   * where the suite plants a secret as `${env:…}`. It must be one of the kind's secret paths.
   */
  secret?: { path: string };
  /** Extra `Connection` spec fields the kind needs (a service setting); default none. */
  connectionSettings?: Record<string, string>;
}

/** Names of every object the suite creates start with this; the PruneScope of rule 5 uses it. */
const PREFIX = 'conformance-';

const RULES = {
  1: 'create converges',
  2: 'a manifest change updates in place',
  3: 'drift is detected and repaired',
  4: 'list agrees with observe',
  5: 'prune deletes only what the kind owns',
  6: 'ensure: absent deletes',
  7: 'secrets never appear in output',
  8: 'declared capabilities hold',
} as const;
type Rule = keyof typeof RULES;

interface CliRun {
  args: string[];
  code: number;
  stdout: string;
  stderr: string;
}

type PlanChange = PlanJson['changes'][number];

class Captured extends Writable {
  text = '';
  readonly isTTY = false;
  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

function setPath(target: Record<string, unknown>, dotted: string, value: unknown): void {
  const parts = dotted.split('.');
  let at = target;
  for (const part of parts.slice(0, -1)) {
    const next = at[part];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) at[part] = {};
    at = at[part] as Record<string, unknown>;
  }
  at[parts[parts.length - 1]!] = value;
}

/** A diff path at or under a dotted spec field: `Policies`, `Policies[0]`, `vcs-repo.branch`. */
function isUnder(diffPath: string, field: string): boolean {
  return diffPath === field || diffPath.startsWith(`${field}.`) || diffPath.startsWith(`${field}[`);
}

/** A loopback port nothing listens on (taken, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Every file under a folder, with its text (for "the secret is written nowhere" checks). */
function filesUnder(dir: string): { file: string; text: string }[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    const file = path.join(dir, name);
    return statSync(file).isDirectory() ? filesUnder(file) : [{ file, text: readFileSync(file, 'utf8') }];
  });
}

export function runKindConformance(testCase: ConformanceCase): void {
  const catalog = testCase.catalog ?? defaultCatalog;
  const kindName = testCase.kind;

  const say = (rule: Rule, what: string) =>
    `[conformance ${kindName}] rule ${rule} (${RULES[rule]}): ${what}`;

  describe(`kind conformance: ${kindName}`, () => {
    // The sandbox's root token is the planted secret: every run of the suite holds it (in the
    // environment for rules 1-6, through a Connection's `${env:…}` for rule 7) and none may print it.
    const planted = `planted-token-${randomUUID()}`;
    const specSecret = `planted-spec-secret-${randomUUID()}`;
    const runs: CliRun[] = [];
    let kind: AnyResourceKind;
    let sandbox: RunningSandbox;
    let env: NodeJS.ProcessEnv;
    let ctx: ServiceConnections;
    let root: string;

    beforeAll(async () => {
      const found = catalog.kind(kindName);
      if (!found) throw new Error(`[conformance ${kindName}] the catalog has no kind ${kindName}`);
      kind = found;
      sandbox = await startSandbox({
        port: 0,
        token: planted,
        ...(testCase.sandbox ? { config: testCase.sandbox } : {}),
      });
      root = tempDir(`converge-conformance-${kindName.toLowerCase()}-`);
      env = {
        ...sandbox.env(),
        PATH: process.env.PATH,
        // Write-only digests go here, never into the repository's working folder.
        CONVERGE_STATE_DIR: path.join(root, 'state'),
      };
      ctx = new ServiceConnections(env, catalog.definitions);
    });

    afterAll(async () => {
      await ctx?.close();
      await sandbox?.close();
      if (root) rmSync(root, { recursive: true, force: true });
    });

    // --- helpers --------------------------------------------------------------------------------

    /** Runs the CLI in-process; every run is checked for the planted secrets (rule 7). */
    async function cli(args: string[], runEnv: NodeJS.ProcessEnv = env): Promise<CliRun> {
      const stdout = new Captured();
      const stderr = new Captured();
      const io: Io = { stdout, stderr, stdinIsTTY: false, env: runEnv };
      const code = await run(args, io, catalog);
      const result = { args, code, stdout: stdout.text, stderr: stderr.text };
      runs.push(result);
      for (const secret of [planted, specSecret]) {
        expect(
          result.stdout.includes(secret),
          say(7, `\`converge ${args.join(' ')}\` printed a secret on stdout`),
        ).toBe(false);
        expect(
          result.stderr.includes(secret),
          say(7, `\`converge ${args.join(' ')}\` printed a secret on stderr`),
        ).toBe(false);
      }
      return result;
    }

    function expectExit(rule: Rule, r: CliRun, code: number): void {
      expect(
        r.code,
        say(
          rule,
          `\`converge ${r.args.join(' ')}\` exited ${r.code}, expected ${code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`,
        ),
      ).toBe(code);
    }

    function listScope(): { namespace?: string } {
      return testCase.namespace !== undefined ? { namespace: testCase.namespace } : {};
    }

    function keyOf(name: string, extra: Partial<ResourceKey> = {}): ResourceKey {
      return {
        kind: kindName,
        name,
        ...(testCase.namespace !== undefined ? { namespace: testCase.namespace } : {}),
        ...extra,
      };
    }

    interface DocOptions {
      spec?: Record<string, unknown>;
      ensure?: 'absent';
      connection?: string;
    }

    function doc(name: string, options: DocOptions = {}): Record<string, unknown> {
      return {
        apiVersion: 'converge/v1',
        kind: kindName,
        metadata: {
          name,
          ...(testCase.namespace !== undefined ? { [namespaceFieldOf(kind)]: testCase.namespace } : {}),
          ...(options.connection ? { connection: options.connection } : {}),
          ...(options.ensure ? { ensure: options.ensure } : {}),
        },
        spec: options.spec ?? testCase.spec(name),
      };
    }

    /** A folder for one rule, holding one manifest file that `write` replaces. */
    function manifest(label: string) {
      const dir = mkdtempSync(path.join(root, `${label}-`));
      const file = path.join(dir, 'manifest.yaml');
      return {
        dir,
        write(docs: Record<string, unknown>[]): void {
          writeFileSync(file, docs.map((d) => stringify(d)).join('---\n'));
        },
      };
    }

    async function planJson(rule: Rule, dir: string, extra: string[] = [], runEnv?: NodeJS.ProcessEnv) {
      const r = await cli(['plan', '-f', dir, '--json', ...extra], runEnv);
      expectExit(rule, r, 0);
      return JSON.parse(r.stdout) as PlanJson;
    }

    function changeOf(rule: Rule, plan: PlanJson, key: ResourceKey): PlanChange {
      const address = addressOf(key);
      const change = plan.changes.find((c) => c.address === address);
      expect(
        change,
        say(
          rule,
          `plan --json has no change for ${address}; it has: ${plan.changes.map((c) => c.address).join(', ')}`,
        ),
      ).toBeDefined();
      return change!;
    }

    function expectAction(
      rule: Rule,
      plan: PlanJson,
      key: ResourceKey,
      action: string,
      when: string,
    ): PlanChange {
      const change = changeOf(rule, plan, key);
      expect(
        change.action,
        say(
          rule,
          `${when}: ${change.address} should plan \`${action}\`, plans \`${change.action}\` with diffs ${JSON.stringify(change.diffs)}`,
        ),
      ).toBe(action);
      return change;
    }

    /** The plan has nothing to do: the object is `noop`, counted as such, and --detailed-exitcode says 0. */
    async function expectConverged(
      rule: Rule,
      dir: string,
      key: ResourceKey,
      when: string,
      runEnv: NodeJS.ProcessEnv = env,
    ): Promise<void> {
      const plan = await planJson(rule, dir, [], runEnv);
      expectAction(rule, plan, key, 'noop', when);
      const { noop, ...changes } = plan.summary;
      expect(
        noop,
        say(rule, `${when}: summary.noop does not count ${addressOf(key)}`),
      ).toBeGreaterThanOrEqual(1);
      expect(changes, say(rule, `${when}: the summary still has changes`)).toEqual({
        create: 0,
        update: 0,
        replace: 0,
        delete: 0,
        // An object that could not be compared is not converged, whatever its action says.
        unplanned: 0,
      });
      const detailed = await cli(['plan', '-f', dir, '--detailed-exitcode'], runEnv);
      expectExit(rule, detailed, 0);
    }

    async function applyOk(
      rule: Rule,
      dir: string,
      extra: string[] = [],
      runEnv?: NodeJS.ProcessEnv,
    ): Promise<CliRun> {
      const r = await cli(['apply', '-f', dir, '--auto-approve', ...extra], runEnv);
      expectExit(rule, r, 0);
      return r;
    }

    async function observe(key: ResourceKey): Promise<Observed | undefined> {
      return kind.observe(ctx, key);
    }

    async function mustObserve(rule: Rule, key: ResourceKey, when: string): Promise<Observed> {
      const o = await observe(key);
      expect(o, say(rule, `${when}: observe(${addressOf(key)}) found nothing`)).toBeDefined();
      return o!;
    }

    /**
     * Deletes what a rule created, so that rule 5's prune sees only its own objects. Returns what could
     * not be deleted instead of throwing, so a clean-up problem never hides the rule's own failure.
     */
    async function cleanUp(keys: readonly ResourceKey[]): Promise<string[]> {
      const problems: string[] = [];
      for (const key of keys) {
        try {
          const o = await observe(key);
          if (o) await kind.delete(ctx, o);
        } catch (error) {
          problems.push(`${addressOf(key)}: ${(error as Error).message}`);
        }
      }
      return problems;
    }

    /** One rule as one test, on its own objects, deleted afterwards whatever happened. */
    function rule(n: Rule, keys: readonly ResourceKey[], body: () => Promise<void>, part?: string): void {
      it(`rule ${n}: ${RULES[n]}${part ? `: ${part}` : ''}`, async () => {
        let failure: unknown;
        try {
          await body();
        } catch (error) {
          failure = error;
        }
        const leftovers = await cleanUp(keys);
        if (failure !== undefined) throw failure;
        expect(leftovers, say(n, 'the objects the rule created could not be deleted afterwards')).toEqual([]);
      });
    }

    /** Creates an object through the CLI and checks it converged; returns its manifest folder. */
    async function created(rule: Rule, label: string, key: ResourceKey) {
      const m = manifest(label);
      m.write([doc(key.name)]);
      await applyOk(rule, m.dir);
      await mustObserve(rule, key, 'after the first apply');
      return m;
    }

    // --- rules ----------------------------------------------------------------------------------

    const createKey = keyOf(`${PREFIX}create`);
    rule(1, [createKey], async () => {
      const key = createKey;
      const m = manifest('rule1');
      m.write([doc(key.name)]);
      expectAction(1, await planJson(1, m.dir), key, 'create', 'before the first apply');
      expectExit(1, await cli(['plan', '-f', m.dir, '--detailed-exitcode']), 2);
      await applyOk(1, m.dir);
      await mustObserve(1, key, 'after apply');
      await expectConverged(1, m.dir, key, 'right after the apply that created it');
    });

    const updateKey = keyOf(`${PREFIX}update`);
    rule(2, [updateKey], async () => {
      const key = updateKey;
      const m = await created(2, 'rule2', key);
      const { field, value } = testCase.change;
      const edited = testCase.spec(key.name);
      setPath(edited, field, value);
      m.write([doc(key.name, { spec: edited })]);
      const change = expectAction(2, await planJson(2, m.dir), key, 'update', `after changing spec.${field}`);
      const onField = change.diffs.filter((d) => isUnder(d.path, field));
      expect(
        onField.length,
        say(2, `the update has no diff on ${field}; its diffs: ${JSON.stringify(change.diffs)}`),
      ).toBeGreaterThan(0);
      // A whole-value change shows the new value (list fields diff item by item instead).
      const exact = onField.find((d) => d.path === field && d.op === 'change');
      if (exact && !exact.sensitive) {
        expect(exact.after, say(2, `the diff on ${field} does not show the new value`)).toEqual(value);
      }
      expect(
        change.diffs.filter((d) => !isUnder(d.path, field)),
        say(2, `changing only ${field} plans diffs on other fields too`),
      ).toEqual([]);
      await applyOk(2, m.dir);
      await expectConverged(2, m.dir, key, 'after applying the change');
    });

    const driftKey = keyOf(`${PREFIX}drift`);
    rule(3, [driftKey], async () => {
      const key = driftKey;
      const m = await created(3, 'rule3', key);
      await testCase.drift.apply({ ctx, key, observed: await mustObserve(3, key, 'before the drift') });
      const when = `after ${testCase.drift.field} was changed behind Converge's back`;
      const change = expectAction(3, await planJson(3, m.dir), key, 'update', when);
      expect(
        change.diffs.some((d) => isUnder(d.path, testCase.drift.field)),
        say(3, `${when}: no diff on ${testCase.drift.field}; the diffs: ${JSON.stringify(change.diffs)}`),
      ).toBe(true);
      await applyOk(3, m.dir);
      await expectConverged(3, m.dir, key, 'after apply repaired the drift');
    });

    const listKey = keyOf(`${PREFIX}list`);
    rule(4, [listKey], async () => {
      if (!isListable(kind)) {
        expect(isPrunable(kind), say(4, 'a kind that can be pruned must implement list')).toBe(false);
        return;
      }
      const listable = kind;
      const key = listKey;
      await created(4, 'rule4', key);
      const agree = async (when: string) => {
        const observed = await mustObserve(4, key, when);
        const listed = await listable.list(ctx, listScope());
        const item = listed.find((o) => o.key.name === key.name);
        expect(
          item,
          say(4, `${when}: list(namespace ${testCase.namespace}) does not return ${addressOf(key)}`),
        ).toBeDefined();
        expect(addressOf(item!.key), say(4, `${when}: list and observe give different keys`)).toBe(
          addressOf(observed.key),
        );
        expect(item!.id, say(4, `${when}: list and observe give different ids`)).toBe(observed.id);
        expect(
          item!.version,
          say(4, `${when}: list and observe give different versions (a saved plan would call it stale)`),
        ).toEqual(observed.version);
        // A kind whose list gives less than a read (readWhole) is shown for deletion once read whole.
        const shown = listable.readWhole ? await listable.readWhole(ctx, item!) : item!;
        expect(
          liveAttributes(kind, shown),
          say(4, `${when}: describe() of the listed object differs from the observed one`),
        ).toEqual(liveAttributes(kind, observed));
        if (isNamespaced(kind)) {
          expect(
            listed.filter((o) => o.key.namespace !== testCase.namespace).map((o) => addressOf(o.key)),
            say(4, `${when}: list(namespace ${testCase.namespace}) returns objects of other namespaces`),
          ).toEqual([]);
        }
        if (isPrunable(kind)) {
          const scope = { kind: kindName, ...listScope() };
          expect(
            kind.owns(item!, scope),
            say(4, `${when}: owns() differs between the listed and the observed object`),
          ).toBe(kind.owns(observed, scope));
        }
      };
      await agree('right after create');
      await testCase.drift.apply({ ctx, key, observed: await mustObserve(4, key, 'before the drift') });
      await agree(`after ${testCase.drift.field} was changed behind Converge's back`);
    });

    // Rule 5's objects. Declared-scope kinds: the foreign object is outside the PruneScope's prefix.
    // Marker kinds: it even looks like ours, and only the missing marker says it is not.
    const scopePrefix = `${PREFIX}prune-`;
    const anchorKey = keyOf(`${scopePrefix}anchor`);
    const victimKey = keyOf(`${scopePrefix}victim`);
    const foreignKey = keyOf(`${scopePrefix}foreign`);
    const outsideKey = keyOf('foreign-prune');
    rule(5, [anchorKey, victimKey, foreignKey, outsideKey], async () => {
      const [anchor, victim] = [anchorKey, victimKey];
      const ownership = isPrunable(kind) ? kind.ownership : undefined;
      const foreign = ownership === 'declared-scope' ? outsideKey : foreignKey;
      const scopeDocs =
        ownership === 'declared-scope'
          ? [
              {
                apiVersion: 'converge/v1',
                kind: 'PruneScope',
                metadata: { name: 'conformance-scope' },
                spec: { kind: kindName, ...listScope(), namePrefix: scopePrefix },
              },
            ]
          : [];
      const m = manifest('rule5');
      m.write([doc(anchor.name), doc(victim.name), ...scopeDocs]);
      await applyOk(5, m.dir);
      await mustObserve(5, victim, 'after the apply that created it');
      if (isPrunable(kind)) {
        expect(
          testCase.foreign,
          say(5, 'a kind that can be pruned must supply foreign() in its case'),
        ).toBeDefined();
        await testCase.foreign!({ ctx, key: foreign });
        await mustObserve(5, foreign, "after the case's foreign() created it");
        const listed = (await kind.list(ctx, listScope())).map((o) => o.key.name);
        expect(listed, say(5, 'list does not return the foreign object, so prune never saw it')).toContain(
          foreign.name,
        );
      }

      m.write([doc(anchor.name), ...scopeDocs]);
      const withoutPrune = await planJson(5, m.dir);
      expect(
        withoutPrune.changes.filter((c) => c.action === 'delete').map((c) => c.address),
        say(5, 'without --prune, dropping an object from the manifest must not plan its deletion'),
      ).toEqual([]);

      const plan = await planJson(5, m.dir, ['--prune']);
      const deletes = plan.changes.filter((c) => c.action === 'delete');
      if (!ownership) {
        expect(
          deletes.map((c) => c.address),
          say(5, 'a kind without ownership must never be pruned'),
        ).toEqual([]);
        return;
      }
      expect(
        deletes.map((c) => c.address),
        say(
          5,
          `plan --prune must delete exactly the dropped object, never ${addressOf(foreign)} (not Converge's)`,
        ),
      ).toEqual([addressOf(victim)]);
      expect(deletes[0]!.reason, say(5, 'a prune deletion must say why')).toBeTruthy();
      expectAction(5, plan, anchor, 'noop', 'plan --prune, for the object still declared');

      await applyOk(5, m.dir, ['--prune']);
      expect(
        await observe(victim),
        say(5, 'apply --prune did not delete the dropped object'),
      ).toBeUndefined();
      await mustObserve(5, foreign, 'after apply --prune (the foreign object must survive)');
      await mustObserve(5, anchor, 'after apply --prune (the declared object must survive)');
    });

    const absentKey = keyOf(`${PREFIX}absent`);
    rule(6, [absentKey], async () => {
      const key = absentKey;
      const m = await created(6, 'rule6', key);
      m.write([doc(key.name, { ensure: 'absent' })]);
      const change = expectAction(6, await planJson(6, m.dir), key, 'delete', 'with metadata.ensure: absent');
      expect(change.reason, say(6, 'the deletion must say it was declared absent')).toMatch(/absent/);
      await applyOk(6, m.dir);
      expect(await observe(key), say(6, 'after apply the object still exists')).toBeUndefined();
      await expectConverged(6, m.dir, key, 'once the absent object is gone');
    });

    const secretKey = keyOf(`${PREFIX}secret`);
    rule(7, [secretKey], async () => {
      const key = { ...secretKey, connection: 'conformance' };
      // The environment holds the token only under a name of our own; the manifest interpolates it.
      const secretEnv: NodeJS.ProcessEnv = {
        ...Object.fromEntries(Object.entries(env).filter(([name]) => !name.endsWith('_TOKEN'))),
        CONFORMANCE_TOKEN: planted,
        CONFORMANCE_SPEC_SECRET: specSecret,
        // The manifest reads only the variables the operator exposes.
        CONVERGE_ALLOW_ENV: 'CONFORMANCE_TOKEN,CONFORMANCE_SPEC_SECRET',
      };
      expect(
        secretEnv[`${envVarPrefix(kind.service)}_TOKEN`],
        say(7, 'set-up: the token must reach Converge only through the Connection'),
      ).toBeUndefined();
      const connection = (address: string, token = '${env:CONFORMANCE_TOKEN}') => ({
        apiVersion: 'converge/v1',
        kind: 'Connection',
        metadata: { name: 'conformance' },
        spec: { service: kind.service, address, token, ...testCase.connectionSettings },
      });
      const objectSpec = testCase.spec(key.name);
      if (testCase.secret) {
        expect(
          [...(hasSensitiveAttributes(kind) ? kind.sensitive : []), ...writeOnlyPaths(kind)],
          say(
            7,
            `the case plants a secret at ${testCase.secret.path}, which the kind marks neither sensitive nor writeOnly`,
          ),
        ).toContain(testCase.secret.path);
        setPath(objectSpec, testCase.secret.path, '${env:CONFORMANCE_SPEC_SECRET}');
      }
      const object = doc(key.name, { spec: objectSpec, connection: 'conformance' });
      const m = manifest('rule7');
      const planFile = path.join(m.dir, '..', 'rule7.plan');

      m.write([connection(sandbox.url), object]);
      expectExit(7, await cli(['validate', '-f', m.dir], secretEnv), 0);
      const human = await cli(['plan', '-f', m.dir], secretEnv);
      expectExit(7, human, 0);
      if (testCase.secret) {
        expect(human.stdout, say(7, `the plan does not mask ${testCase.secret.path}`)).toContain(
          '(sensitive value)',
        );
      }
      expectExit(7, await cli(['plan', '-f', m.dir, '--detailed-exitcode'], secretEnv), 2);
      expectAction(7, await planJson(7, m.dir, [], secretEnv), key, 'create', 'through the Connection');
      expectExit(7, await cli(['plan', '-f', m.dir, '--markdown'], secretEnv), 0);
      expectExit(7, await cli(['plan', '-f', m.dir, '-out', planFile], secretEnv), 0);
      const saved = readFileSync(planFile, 'utf8');
      expect(saved.includes(planted), say(7, 'the saved plan file holds the connection token')).toBe(false);
      expect(saved.includes(specSecret), say(7, 'the saved plan file holds the sensitive spec value')).toBe(
        false,
      );
      expectExit(7, await cli(['apply', planFile], secretEnv), 0);
      await mustObserve(7, secretKey, 'after applying the saved plan');
      await expectConverged(7, m.dir, key, 'after applying through the Connection', secretEnv);

      // Error runs: nobody listening, and a token the service refuses (the secret plus a suffix).
      const closed = `http://127.0.0.1:${await closedPort()}`;
      m.write([connection(closed), object]);
      // Allowed outside the manifest, so the token really is sent there and the failure is the network's.
      const unreachable = await cli(
        ['apply', '-f', m.dir, '--auto-approve', '--allow-address', closed],
        secretEnv,
      );
      expectExit(7, unreachable, 1);
      expect(unreachable.stderr, say(7, 'an unreachable service must be reported')).not.toBe('');
      m.write([connection(sandbox.url, '${env:CONFORMANCE_TOKEN}-refused'), object]);
      const refused = await cli(['apply', '-f', m.dir, '--auto-approve'], secretEnv);
      expectExit(7, refused, 1);
      expect(refused.stderr, say(7, 'a refused token must be reported')).not.toBe('');

      for (const { file, text } of filesUnder(path.join(root, 'state'))) {
        expect(
          text.includes(planted) || text.includes(specSecret),
          say(7, `${file} (local inventory) holds a secret`),
        ).toBe(false);
      }
    });

    // Rule 8: the capability groups the kind declares, known when the tests are collected.
    const declared = catalog.kind(kindName);

    /** The desired object as the planner hands it to the kind: local files read, service preparation done. */
    async function desiredFor(key: ResourceKey): Promise<Desired> {
      let d: Desired = { key, spec: testCase.spec(key.name) };
      if (hasLocalFiles(kind)) d = (await kind.resolve(d)).desired;
      if (hasServerSidePlan(kind)) d = (await kind.prepare(ctx, d)).desired;
      return d;
    }

    const staleKey = keyOf(`${PREFIX}stale`);
    if (isVersioned(declared)) {
      rule(
        8,
        [staleKey],
        async () => {
          const key = staleKey;
          await created(8, 'rule8-versioned', key);
          const seen = await mustObserve(8, key, 'after create');
          await testCase.drift.apply({ ctx, key, observed: seen });
          const moved = await mustObserve(8, key, 'after the drift');
          expect(
            moved.version,
            say(8, `the drift did not move the ${declared.versionLabel}, so staleness cannot be told`),
          ).not.toEqual(seen.version);
          await expect(
            kind.update(ctx, await desiredFor(key), seen),
            say(8, `an update against the stale ${declared.versionLabel} was not refused`),
          ).rejects.toThrow();
          expect(
            (await mustObserve(8, key, 'after the refused update')).version,
            say(8, 'the refused update changed the object anyway'),
          ).toEqual(moved.version);
        },
        'Versioned',
      );
    }

    const plannedKey = keyOf(`${PREFIX}planned`);
    if (hasServerSidePlan(declared)) {
      rule(
        8,
        [plannedKey],
        async () => {
          const key = plannedKey;
          await created(8, 'rule8-server-plan', key);
          const d = await desiredFor(key);
          const o = await mustObserve(8, key, 'after create');
          const planned = declared.compare(d, o, await declared.serverPlan(ctx, d, o));
          expect(
            [planned.diffs, planned.notCompared],
            say(8, "with the service's plan, the object just applied must compare equal"),
          ).toEqual([[], undefined]);
          const blind = declared.compare(d, o);
          expect(
            blind.notCompared !== undefined || (blind.problems?.length ?? 0) > 0,
            say(8, "without the service's plan the kind must not call the object up to date"),
          ).toBe(true);
        },
        'ServerSidePlan',
      );
    }

    const listsKey = keyOf(`${PREFIX}lists`);
    const lists = declared ? listAttributesOf(declared) : [];
    if (lists.length > 0) {
      rule(
        8,
        [listsKey],
        async () => {
          // A list change is shown item by item with a count of the items that stay, counted from the
          // change's `before`: a list missing there (a Workspace's trigger-patterns was) showed a
          // pattern added with no count, which read as the list becoming that one pattern.
          const key = listsKey;
          const m = await created(8, 'rule8-lists', key);
          const change = expectAction(8, await planJson(8, m.dir), key, 'noop', 'right after the apply');
          const set = lists.filter((a) => Array.isArray(change.after?.[a]) && change.after[a].length > 0);
          for (const attribute of set) {
            const live = change.before?.[attribute];
            expect(
              Array.isArray(live) ? live.length : live,
              say(8, `the plan's before must hold the live ${attribute} whole (a list attribute)`),
            ).toBe((change.after![attribute] as unknown[]).length);
          }
        },
        'RenderDetails.listAttributes',
      );
    }

    if (hasSpecRules(declared)) {
      it('rule 8: declared capabilities hold: SpecRules', () => {
        expect(
          declared.validateSpec(testCase.spec(`${PREFIX}rules`)),
          say(8, "the case's valid spec breaks the kind's own spec rules"),
        ).toEqual([]);
      });
    }

    if (hasLocalFiles(declared)) {
      it('rule 8: declared capabilities hold: LocalFiles', () => {
        const fields = Object.keys((declared.specSchema as { properties?: object }).properties ?? {});
        expect(
          declared.localFiles.filter((f) => !fields.includes(f)),
          say(8, 'local-file fields the spec schema does not have (the manifest would never check them)'),
        ).toEqual([]);
      });
    }

    if (hasApplySwitches(declared)) {
      it('rule 8: declared capabilities hold: ApplySwitches', async () => {
        const help = await cli(['apply', '--help']);
        expect(
          declared.options.map((o) => `--${o.flag}`).filter((flag) => !help.stdout.includes(flag)),
          say(8, 'switches the kind honours that `apply --help` does not offer'),
        ).toEqual([]);
      });
    }

    if (hasDependencies(declared)) {
      it('rule 8: declared capabilities hold: Dependencies', () => {
        const key = keyOf(`${PREFIX}needs`);
        const needs = declared.dependencies({ key, desired: { key, spec: testCase.spec(key.name) } });
        const incomplete = needs.filter((k) => {
          const needed = catalog.kind(k.kind);
          return !needed || (isNamespaced(needed) && k.namespace === undefined);
        });
        expect(
          incomplete.map((k) => addressOf(k)),
          say(8, 'dependencies must be complete keys of known kinds (namespace filled in)'),
        ).toEqual([]);
      });
    }

    if (hasSensitiveAttributes(declared) || writeOnlyPaths(declared).length > 0) {
      it('rule 8: declared capabilities hold: secret attributes', () => {
        expect(
          testCase.secret,
          say(8, 'a kind with sensitive or write-only attributes must plant a secret in rule 7'),
        ).toBeDefined();
      });
    }

    it('never printed a planted secret in any run of the suite', () => {
      expect(runs.length, say(7, 'the suite made no CLI run')).toBeGreaterThan(0);
      const leaks = runs.filter((r) =>
        [planted, specSecret].some((s) => r.stdout.includes(s) || r.stderr.includes(s)),
      );
      expect(
        leaks.map((r) => `converge ${r.args.join(' ')}`),
        say(7, 'runs that printed a secret'),
      ).toEqual([]);
    });
  });
}
