/**
 * The reconcile loop in-process against the sandbox over loopback HTTP: it corrects drift made behind
 * its back, reports drift without changing anything in dry-run mode, serves /metrics and /healthz,
 * guards POST /reconcile with a bearer token, and backs off after failed cycles.
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectionFromEnv } from '../../src/clients/http/index.js';
import { RegistryClient } from '../../src/clients/registry/client.js';
import { registryService } from '../../src/clients/registry/definition.js';
import { type ReconcileLoop, type ReconcileOptions, runReconcile } from '../../src/reconcile/loop.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { refusingLoopbackPort } from '../support/ports.js';
import { tempDir } from '../support/temp-dirs.js';
import { runCli } from '../support/run-cli.js';

let sandbox: RunningSandbox;
let registry: RegistryClient;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
  const endpoint = connectionFromEnv(registryService, sandbox.env());
  registry = RegistryClient.fromConnection({ address: endpoint.address, token: sandbox.rootToken });
});
afterAll(async () => {
  await registry?.close();
  await sandbox?.close();
});

const unique = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;

function roleManifest(name: string, description: string): string {
  const dir = tempDir('converge-reconcile-');
  writeFileSync(
    path.join(dir, 'role.yaml'),
    `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: ${name} }\nspec:\n  Description: ${description}\n`,
  );
  return dir;
}

type Line = Record<string, unknown> & { type: string };

interface Started {
  loop: ReconcileLoop;
  stop: AbortController;
  lines: () => Line[];
  cycles: () => Line[];
}

async function start(options: Partial<ReconcileOptions> & { paths: string[] }): Promise<Started> {
  const text: string[] = [];
  const stop = new AbortController();
  const loop = await runReconcile(
    {
      intervalMs: 200,
      env: { ...sandbox.env(), CONVERGE_STATE_DIR: tempDir('converge-state-') },
      signal: stop.signal,
      ...options,
    },
    { stdout: { write: (t: string) => text.push(t) } },
  );
  const lines = () =>
    text
      .join('')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Line);
  return { loop, stop, lines, cycles: () => lines().filter((l) => l.type === 'cycle') };
}

async function until<T>(what: string, probe: () => T | undefined | false, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Waits on a signal only: the test decides when the next cycle runs (bounded, so a bug cannot hang). */
function heldSleep(ms: number, signal: AbortSignal): Promise<void> {
  void ms;
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, 10_000);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

describe('reconcile loop', () => {
  it('puts back a role changed behind its back, logging each change and cycle as JSON', async () => {
    const name = unique('drifted');
    const run = await start({ paths: [roleManifest(name, 'managed')] });
    await until('the first cycle', () => run.cycles()[0]);
    expect(run.cycles()[0]).toMatchObject({
      cycle: 1,
      outcome: 'corrected',
      counts: { create: 1, applied: 1 },
    });
    const created = await registry.readRoleByName(name);
    expect(created?.Description).toBe('managed');

    await registry.updateRole(created!.ID, { Name: name, Description: 'edited by hand' });
    await until('a cycle correcting the edit', () =>
      run.cycles().find((c) => (c.cycle as number) > 1 && c.outcome === 'corrected'),
    );
    expect((await registry.readRoleByName(name))?.Description).toBe('managed');
    const change = run.lines().find((l) => l.type === 'change' && l.action === 'update');
    expect(change).toMatchObject({ kind: 'AclRole', address: `AclRole/default/${name}`, result: 'applied' });
    expect(typeof change?.ts).toBe('string');

    run.stop.abort('SIGTERM');
    const summary = await run.loop.done;
    expect(summary.reason).toBe('SIGTERM');
    const last = run.lines().at(-1)!;
    expect(last).toMatchObject({ type: 'shutdown', reason: 'SIGTERM' });
    expect(last.cycles).toBe(summary.cycles);
  });

  it('with dryRun reports drift every cycle and changes nothing', async () => {
    const name = unique('dry');
    await registry.createRole({ Name: name, Description: 'live' });
    const run = await start({ paths: [roleManifest(name, 'wanted')], dryRun: true });
    await until('two cycles', () => run.cycles().length >= 2);
    run.stop.abort('SIGINT');
    await run.loop.done;
    expect(run.cycles()[0]).toMatchObject({ outcome: 'drift', counts: { update: 1 } });
    expect(run.lines().find((l) => l.type === 'change')).toMatchObject({
      address: `AclRole/default/${name}`,
      action: 'update',
      result: 'drift',
    });
    expect((await registry.readRoleByName(name))?.Description).toBe('live');
  });

  it('waits an interval longer than a Node timer holds (600h) instead of cycling every millisecond', async () => {
    const name = unique('long');
    const run = await start({
      paths: [roleManifest(name, 'wanted')],
      dryRun: true,
      intervalMs: 600 * 3600_000,
    });
    await until('the first cycle', () => run.cycles().length >= 1);
    // An overflowing timer fires after 1 ms: dozens of cycles would run in this time.
    await new Promise((r) => setTimeout(r, 300));
    expect(run.cycles()).toHaveLength(1);
    run.stop.abort('SIGINT');
    await run.loop.done;
  });

  it('has a drift series at 0 for every kind of the manifest from a first cycle in sync', async () => {
    const name = unique('steady');
    const paths = [roleManifest(name, 'steady')];
    const first = await start({ paths });
    await until('the role applied', () => first.cycles()[0]);
    first.stop.abort('SIGTERM');
    await first.loop.done;
    const run = await start({ paths, listen: { host: '127.0.0.1', port: 0 } });
    await until('a cycle', () => run.cycles()[0]);
    const text = await (await fetch(`http://127.0.0.1:${run.loop.address!.port}/metrics`)).text();
    run.stop.abort('SIGTERM');
    await run.loop.done;
    expect(run.cycles()[0]).toMatchObject({ outcome: 'in_sync' });
    // Before, no series until the kind first drifted: a dashboard read "No data".
    expect(text).toMatch(/^converge_reconcile_drift\{kind="AclRole"\} 0$/m);
    expect(text).toMatch(/^converge_reconcile_unplanned\{kind="AclRole"\} 0$/m);
  });

  it('serves Prometheus metrics whose counts move with the cycles', async () => {
    const name = unique('metered');
    const run = await start({ paths: [roleManifest(name, 'm')], listen: { host: '127.0.0.1', port: 0 } });
    const url = `http://127.0.0.1:${run.loop.address!.port}/metrics`;
    await until('a cycle', () => run.cycles()[0]);
    const first = await fetch(url);
    expect(first.headers.get('content-type')).toContain('text/plain');
    const before = await first.text();
    // HEAD as GET, without the body (a probe or a scraper's check); other methods are told what is served.
    const head = await fetch(url, { method: 'HEAD' });
    expect([head.status, head.headers.get('content-type'), await head.text()]).toEqual([
      200,
      first.headers.get('content-type'),
      '',
    ]);
    const post = await fetch(url, { method: 'POST' });
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
    await until('two more cycles', () => run.cycles().length >= 3);
    const after = await (await fetch(url)).text();
    run.stop.abort('SIGTERM');
    await run.loop.done;

    const value = (text: string, series: string) => {
      const line = text.split('\n').find((l) => l.startsWith(`${series} `));
      return line === undefined ? undefined : Number(line.slice(series.length + 1));
    };
    expect(
      value(before, 'converge_reconcile_changes_total{kind="AclRole",action="create",result="applied"}'),
    ).toBe(1);
    // The first cycle found one role missing and created it: nothing is left differing after it, so
    // a `drift > 0` alert does not fire for the interval after the fix.
    expect(value(before, 'converge_reconcile_drift{kind="AclRole"}')).toBe(0);
    expect(value(after, 'converge_reconcile_drift{kind="AclRole"}')).toBe(0);
    // When the gauges were made: a cycle that cannot plan leaves them, and this says how old they are.
    expect(value(before, 'converge_reconcile_last_plan_timestamp_seconds')).toBeGreaterThan(
      Date.now() / 1000 - 600,
    );
    expect(value(after, 'converge_reconcile_cycles_total{outcome="in_sync"}')).toBeGreaterThanOrEqual(2);
    expect(value(after, 'converge_reconcile_cycle_duration_seconds_count')).toBeGreaterThan(
      value(before, 'converge_reconcile_cycle_duration_seconds_count')!,
    );
    expect(value(after, 'converge_requests_total{service="registry"}')).toBeGreaterThan(
      value(before, 'converge_requests_total{service="registry"}')!,
    );
    expect(value(after, 'converge_reconcile_last_success_timestamp_seconds')).toBeGreaterThan(1e9);
    expect(after).toContain('# TYPE converge_request_retries_total counter');
    expect(after).toContain('# TYPE converge_reconcile_errors_total counter');
  });

  it("reports each cycle's own duration, never the wait between cycles (dry run, as reported)", async () => {
    // The clock is the real one plus every wait slept, and a wait takes no real time: a duration
    // that counted the wait would be at least the interval.
    let slept = 0;
    const stop = new AbortController();
    const intervalMs = 3_600_000;
    const run = await start({
      paths: [roleManifest(unique('duration'), 'd')],
      dryRun: true,
      intervalMs,
      signal: stop.signal,
      now: () => Date.now() + slept,
      sleep: async (ms) => {
        slept += ms;
        if (slept >= 3 * intervalMs) stop.abort('SIGTERM');
      },
    });
    await run.loop.done;
    const cycles = run.cycles();
    expect(cycles).toHaveLength(3);
    for (const c of cycles) expect(c.duration_ms as number).toBeLessThan(intervalMs);
    // Each cycle still starts an interval after the one before: the waits did happen.
    const times = cycles.map((c) => Date.parse(String(c.ts)));
    for (let i = 1; i < times.length; i++)
      expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(intervalMs);
    const sum = await run.loop.metrics.registry.getSingleMetricAsString(
      'converge_reconcile_cycle_duration_seconds',
    );
    expect(Number(/_sum (\S+)/.exec(sum)![1])).toBeLessThan(intervalMs / 1000);
  });

  it('answers /healthz 200 after a success and 503 with a reason once it is 3 intervals old', async () => {
    let clock = Date.parse('2030-01-01T00:00:00Z');
    const run = await start({
      paths: [roleManifest(unique('health'), 'h')],
      intervalMs: 1000,
      now: () => clock,
      sleep: heldSleep,
      listen: { host: '127.0.0.1', port: 0 },
    });
    const url = `http://127.0.0.1:${run.loop.address!.port}/healthz`;
    await until('a cycle', () => run.cycles()[0]);
    expect((await fetch(url)).status).toBe(200);
    clock += 2_900;
    expect((await fetch(url)).status).toBe(200);
    clock += 200;
    const stale = await fetch(url);
    expect(stale.status).toBe(503);
    const body = (await stale.json()) as { status: string; reason: string };
    expect(body.status).toBe('stale');
    expect(body.reason).toMatch(/3\.1s ago, more than 3 intervals/);
    run.stop.abort('SIGTERM');
    await run.loop.done;
  });

  it('says in /healthz that cycles are failing, and why', async () => {
    let clock = Date.parse('2030-01-01T00:00:00Z');
    const dir = roleManifest(unique('failing'), 'f');
    writeFileSync(
      path.join(dir, 'broken.yaml'),
      'apiVersion: converge/v1\nkind: AclRoel\nmetadata: { name: x }\n',
    );
    let cycles = 0;
    const run = await start({
      paths: [dir],
      intervalMs: 1000,
      now: () => clock,
      // Two failed cycles, then held: the probe is read while the loop waits.
      sleep: (ms, signal) => (++cycles < 2 ? Promise.resolve() : heldSleep(ms, signal)),
      listen: { host: '127.0.0.1', port: 0 },
    });
    await until('two cycles', () => run.cycles()[1]);
    clock += 3_100;
    const stale = await fetch(`http://127.0.0.1:${run.loop.address!.port}/healthz`);
    expect(stale.status).toBe(503);
    const body = (await stale.json()) as { reason: string };
    expect(body.reason).toMatch(
      /more than 3 intervals \(3s\); the last 2 cycles failed \(the log's cycle lines say why\)$/,
    );
    // Not the error itself: the probe answers whoever reaches the port, and the error names files.
    expect(body.reason).not.toContain('broken.yaml');
    run.stop.abort('SIGTERM');
    await run.loop.done;
  });

  it('POST /reconcile: 404 without a configured token', async () => {
    const run = await start({
      paths: [roleManifest(unique('notoken'), 'x')],
      listen: { host: '127.0.0.1', port: 0 },
    });
    const res = await fetch(`http://127.0.0.1:${run.loop.address!.port}/reconcile`, {
      method: 'POST',
      headers: { authorization: 'Bearer anything' },
    });
    expect(res.status).toBe(404);
    run.stop.abort('SIGTERM');
    await run.loop.done;
  });

  it('POST /reconcile: 401 without or with a wrong token, 413 for a huge body, 202 runs a cycle now', async () => {
    const token = 'webhook-secret-4f1a9c';
    const run = await start({
      paths: [roleManifest(unique('trigger'), 't')],
      intervalMs: 60_000,
      sleep: heldSleep,
      listen: { host: '127.0.0.1', port: 0 },
      env: {
        ...sandbox.env(),
        CONVERGE_STATE_DIR: tempDir('converge-state-'),
        CONVERGE_RECONCILE_TOKEN: token,
      },
    });
    const url = `http://127.0.0.1:${run.loop.address!.port}/reconcile`;
    await until('the first cycle', () => run.cycles()[0]);
    const post = (headers: Record<string, string>, body?: string) =>
      fetch(url, { method: 'POST', headers, ...(body !== undefined ? { body } : {}) });

    expect((await post({})).status).toBe(401);
    expect((await post({ authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await post({ authorization: `Bearer ${token}x` })).status).toBe(401);
    expect((await post({ authorization: `Basic ${token}` })).status).toBe(401);
    // Hostile: a header far longer than any token, and a body over the cap, are refused, not buffered.
    expect((await post({ authorization: `Bearer ${'A'.repeat(8000)}` })).status).toBe(401);
    expect((await post({ authorization: `Bearer ${token}` }, 'x'.repeat(200_000))).status).toBe(413);
    expect(run.cycles()).toHaveLength(1);

    const accepted = await post({ authorization: `Bearer ${token}` }, '{"ref":"refs/heads/main"}');
    expect(accepted.status).toBe(202);
    await until('a triggered cycle', () => run.cycles()[1]);
    run.stop.abort('SIGTERM');
    await run.loop.done;
    expect(run.cycles()).toHaveLength(2);
  });

  it('a trigger while a cycle is in flight queues one more cycle, not two', async () => {
    // Every request takes 300ms, so a cycle is visibly in flight while the triggers arrive.
    const slow = await startSandbox({ port: 0, config: { faults: { latencyMs: 300 } } });
    try {
      const run = await start({
        paths: [roleManifest(unique('queued'), 'q')],
        intervalMs: 60_000,
        sleep: heldSleep,
        env: { ...slow.env(), CONVERGE_STATE_DIR: tempDir('converge-state-') },
      });
      await until('the first cycle', () => run.cycles()[0]);
      expect(run.loop.trigger().inFlight).toBe(false);
      await new Promise((r) => setTimeout(r, 100));
      const during = [run.loop.trigger(), run.loop.trigger()];
      await until('the queued cycle', () => run.cycles()[2]);
      // Time for a wrongly doubled cycle to show up.
      await new Promise((r) => setTimeout(r, 1_000));
      run.stop.abort('SIGTERM');
      await run.loop.done;
      expect(during.every((d) => d.inFlight)).toBe(true);
      expect(run.cycles()).toHaveLength(3);
    } finally {
      await slow.close();
    }
  });

  it('backs off exponentially while the services are down, and counts the errors per service', async () => {
    const port = await refusingLoopbackPort();
    const waits: number[] = [];
    const stop = new AbortController();
    const run = await start({
      paths: [roleManifest(unique('down'), 'd')],
      intervalMs: 60_000,
      retryBaseMs: 100,
      maxBackoffMs: 1_000,
      random: () => 1,
      timeoutSeconds: 0.5,
      signal: stop.signal,
      env: {
        ...sandbox.env(),
        CONVERGE_REGISTRY_ADDR: `http://127.0.0.1:${port}`,
        CONVERGE_STATE_DIR: tempDir('converge-state-'),
      },
      sleep: async (ms) => {
        waits.push(ms);
        if (waits.length >= 5) stop.abort('SIGTERM');
      },
    });
    await run.loop.done;
    expect(waits).toEqual([100, 200, 400, 800, 1000]);
    const cycles = run.cycles();
    expect(cycles.every((c) => c.outcome === 'failed')).toBe(true);
    expect(String(cycles[0]!.error)).toContain(`127.0.0.1:${port}`);
    expect(cycles[4]).toMatchObject({ consecutive_failures: 5 });
    const metrics = await run.loop.metrics.registry.getSingleMetricAsString(
      'converge_reconcile_errors_total',
    );
    expect(metrics).toContain('converge_reconcile_errors_total{service="registry"} 5');
  });

  it("counts a cycle whose plan a service's answers made impossible as that service's error", async () => {
    const dir = tempDir('converge-reconcile-');
    writeFileSync(
      path.join(dir, 'role.yaml'),
      `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: ${unique('nopolicy')} }\nspec:\n  Policies:\n    - Name: no-such-policy\n`,
    );
    const stop = new AbortController();
    const run = await start({
      paths: [dir],
      intervalMs: 60_000,
      retryBaseMs: 100,
      random: () => 0,
      signal: stop.signal,
      sleep: async () => stop.abort('SIGTERM'),
    });
    await run.loop.done;
    expect(run.cycles()[0]).toMatchObject({ outcome: 'failed' });
    expect(String(run.cycles()[0]!.error)).toContain('policy "no-such-policy" does not exist');
    const metrics = await run.loop.metrics.registry.getSingleMetricAsString(
      'converge_reconcile_errors_total',
    );
    expect(metrics).toContain('converge_reconcile_errors_total{service="registry"} 1');
  });

  it('counts an object it could not plan as unplanned, as the plan summary does: not as a create or drift', async () => {
    // A role naming a policy that does not exist: its action would be a create, but it cannot be planned.
    const planned = unique('planned');
    const dir = roleManifest(planned, 'p');
    writeFileSync(
      path.join(dir, 'unplanned.yaml'),
      `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: ${unique('nopolicy')} }\nspec:\n  Policies:\n    - Name: no-such-policy\n`,
    );
    const stop = new AbortController();
    const run = await start({
      paths: [dir],
      dryRun: true,
      signal: stop.signal,
      sleep: async () => stop.abort('SIGTERM'),
    });
    await run.loop.done;
    expect(run.cycles()[0]).toMatchObject({
      outcome: 'failed',
      // Every key in every cycle line, as in a corrected cycle's: nothing applied is 0, not missing.
      counts: {
        create: 1,
        update: 0,
        replace: 0,
        delete: 0,
        unplanned: 1,
        applied: 0,
        failed: 0,
        skipped: 0,
        stale: 0,
      },
    });
    const text = await run.loop.metrics.registry.metrics();
    expect(text).toMatch(/^converge_reconcile_drift\{kind="AclRole"\} 1$/m);
    expect(text).toMatch(/^converge_reconcile_unplanned\{kind="AclRole"\} 1$/m);
    // The role that could be planned still has its drift line; the dry run says nothing of applying.
    const drift = run.lines().filter((l) => l.type === 'change' && l.result === 'drift');
    expect(drift.map((l) => l.address)).toEqual([`AclRole/default/${planned}`]);
    expect(run.cycles()[0]!.error).not.toContain('nothing applied');
    // As `plan` says it: the object, the file and line, then what is wrong.
    expect(run.cycles()[0]!.error).toMatch(
      /first: AclRole\/default\/nopolicy-\w+: \S*unplanned\.yaml:6:\d+: policy "no-such-policy" does not exist/,
    );
  });

  it('names the attributes that drifted (never their values) on each drift line', async () => {
    const name = unique('drifted');
    const dir = roleManifest(name, 'wanted');
    const stop = new AbortController();
    const setup = await start({
      paths: [dir],
      signal: stop.signal,
      sleep: async () => stop.abort('SIGTERM'),
    });
    await setup.loop.done;
    const created = await registry.readRoleByName(name);
    await registry.updateRole(created!.ID, { Name: name, Description: 'changed-behind-its-back' });
    const stopDry = new AbortController();
    const run = await start({
      paths: [dir],
      dryRun: true,
      signal: stopDry.signal,
      sleep: async () => stopDry.abort('SIGTERM'),
    });
    await run.loop.done;
    const drift = run.lines().filter((l) => l.type === 'change' && l.result === 'drift');
    expect(drift).toEqual([
      expect.objectContaining({ address: `AclRole/default/${name}`, attributes: ['Description'] }),
    ]);
    expect(JSON.stringify(drift)).not.toContain('changed-behind-its-back');
  });

  it("counts a cycle a deletion guard refused as failed, and as no service's error", async () => {
    const [keep, gone] = [unique('guarded'), unique('guarded')];
    const dir = roleManifest(keep, 'k');
    writeFileSync(
      path.join(dir, 'gone.yaml'),
      `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: ${gone} }\nspec:\n  Description: g\n`,
    );
    const run = await start({ paths: [dir], prune: true, limits: { maxDeletes: 0 } });
    await until('the roles created', () => run.cycles().find((c) => c.outcome === 'corrected'));
    // The second role leaves the manifest: pruning it would be a deletion, which the guard refuses.
    writeFileSync(path.join(dir, 'gone.yaml'), '# moved elsewhere\n');
    const refused = await until('a refused cycle', () => run.cycles().find((c) => c.outcome === 'failed'));
    run.stop.abort('SIGTERM');
    await run.loop.done;
    expect(String(refused.error)).toMatch(/the plan deletes 1 object .*more than .*0 allows/);
    expect((await registry.listRoles()).map((r) => r.Name)).toContain(gone);
    const text = await run.loop.metrics.registry.metrics();
    expect(text).toMatch(/^converge_reconcile_cycles_total\{outcome="failed"\} [1-9]/m);
    expect(text).not.toMatch(/^converge_reconcile_errors_total\{/m);
  });

  it('logs each retry and rate-limit pause as a JSON line of its cycle', async () => {
    // A registry whose first two answers are 503s, and which announces a limit of 2 requests a second.
    const faulty = await startSandbox({ port: 0, config: { faults: { failFirst: 2, rateLimit: 2 } } });
    try {
      const text: string[] = [];
      const stop = new AbortController();
      const loop = await runReconcile(
        {
          paths: [roleManifest(unique('retried'), 'r')],
          intervalMs: 60_000,
          env: { ...faulty.env(), CONVERGE_STATE_DIR: tempDir('converge-state-') },
          signal: stop.signal,
          sleep: async () => stop.abort('SIGTERM'),
        },
        { stdout: { write: (t: string) => text.push(t) } },
      );
      await loop.done;
      const lines = text
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Line);
      const retries = lines.filter((l) => l.type === 'retry');
      expect(retries.length).toBeGreaterThanOrEqual(2);
      expect(retries[0]).toMatchObject({
        cycle: 1,
        service: 'registry',
        method: 'GET',
        attempt: 1,
        reason: expect.stringContaining('503'),
      });
      expect(typeof retries[0]!.delay_ms).toBe('number');
      expect(lines.find((l) => l.type === 'rate_limit')).toMatchObject({
        cycle: 1,
        service: 'registry',
        reason: expect.stringMatching(/X-RateLimit/),
      });
      expect(lines.find((l) => l.type === 'cycle')).toMatchObject({ outcome: 'corrected' });
      // Each line comes before its cycle's summary line.
      expect(lines.findIndex((l) => l.type === 'retry')).toBeLessThan(
        lines.findIndex((l) => l.type === 'cycle'),
      );
    } finally {
      await faulty.close();
    }
  });

  it('a manifest broken between cycles fails the cycle with file and line, and the loop goes on', async () => {
    const dir = roleManifest(unique('broken'), 'b');
    writeFileSync(path.join(dir, 'role.yaml'), 'apiVersion: converge/v1\nkind: AclRole\nmetadata: [\n');
    const waits: number[] = [];
    const stop = new AbortController();
    const run = await start({
      paths: [dir],
      intervalMs: 60_000,
      retryBaseMs: 100,
      random: () => 0,
      signal: stop.signal,
      sleep: async (ms) => {
        waits.push(ms);
        if (waits.length >= 2) stop.abort('SIGTERM');
      },
    });
    await run.loop.done;
    const [first] = run.cycles();
    expect(first).toMatchObject({ outcome: 'failed' });
    expect(String(first!.error)).toMatch(/role\.yaml:\d+/);
    expect(run.cycles()).toHaveLength(2);
    expect(waits).toEqual([50, 100]);
  });
});

describe('reconcile loop beside what a kind holds back', () => {
  let locked: RunningSandbox;
  beforeAll(async () => {
    locked = await startSandbox({
      port: 0,
      config: {
        workspaces: {
          organizations: [
            { name: 'acme', teams: [{ name: 'devs', access: { '*': { runs: 'read', lock: true } } }] },
          ],
        },
        tokens: [
          { name: 'bob', secret: 'bob-token', workspaces: { user: 'bob', teams: { acme: ['devs'] } } },
        ],
      },
    });
  });
  afterAll(async () => {
    await locked?.close();
  });

  it("logs a held_back line for someone else's lock each cycle, the cycle still in_sync", async () => {
    const dir = tempDir('converge-reconcile-held-');
    writeFileSync(
      path.join(dir, 'ws.yaml'),
      'apiVersion: converge/v1\nkind: Workspace\nmetadata: { name: held, namespace: acme }\nspec: { locked: false }\n',
    );
    const env = { ...locked.env(), CONVERGE_STATE_DIR: tempDir('converge-state-') };
    expect((await runCli(['apply', '-f', dir, '--auto-approve'], env)).code).toBe(0);
    const bob = { ...env, CONVERGE_WORKSPACES_TOKEN: 'bob-token' };
    expect((await runCli(['workspace', 'lock', 'acme/held', '--reason', 'hotfix'], bob)).code).toBe(0);
    const { loop, stop, lines } = await start({ paths: [dir], dryRun: true, env });
    await until('a cycle', () => lines().some((l) => l.type === 'cycle'));
    stop.abort();
    await loop.done;
    const cycle = lines().find((l) => l.type === 'cycle')!;
    expect(cycle.outcome).toBe('in_sync');
    expect(lines().filter((l) => l.type === 'held_back')[0]).toMatchObject({
      cycle: 1,
      address: 'Workspace/acme/held',
      attributes: ['locked'],
    });
  });
});
