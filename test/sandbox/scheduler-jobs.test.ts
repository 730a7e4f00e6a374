/**
 * The sandbox scheduler's job endpoints over HTTP: register (new, update, identical, EnforceIndex,
 * PreserveCounts), read, list, versions, stop and purge, summary, evaluations and allocations, the
 * request errors, and 501 for what is not emulated yet.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { type Api, apiFor, UUID_RE } from './helpers.js';
import { getJson, type Json, jobSpec, register } from './scheduler-helpers.js';

let sandbox: RunningSandbox;
let api: Api;

beforeAll(async () => {
  sandbox = await startSandbox({
    config: {
      scheduler: {
        namespaces: ['team-a', 'team-b'],
        nodes: [
          { name: 'n1', datacenter: 'dc1' },
          { name: 'n2', datacenter: 'dc1' },
          { name: 'n3', datacenter: 'dc1' },
          { name: 'e1', datacenter: 'eu-1' },
        ],
      },
    },
  });
  api = apiFor(sandbox);
});

afterAll(async () => {
  await sandbox.close();
});

type Alloc = Json & {
  ID: string;
  Name: string;
  NodeName: string;
  TaskGroup: string;
  DesiredStatus: string;
  ClientStatus: string;
};
type Eval = Json & { ID: string; Status: string; TriggeredBy: string; JobModifyIndex: number };

const allocsOf = (id: string, q = '') => getJson<Alloc[]>(api, `/v1/job/${id}/allocations${q}`);
const evalsOf = (id: string) => getJson<Eval[]>(api, `/v1/job/${id}/evaluations`);
const running = (allocs: Alloc[]) => allocs.filter((a) => a.DesiredStatus === 'run');

describe('register a new job', () => {
  it('answers the register-style response, stores version 0 with the canonical defaults, and runs it', async () => {
    const res = await api('PUT', '/v1/jobs', { body: { Job: jobSpec('reg-new') } });
    expect(res.status).toBe(200);
    const reply = res.json<Json>();
    expect(reply).toMatchObject({ Warnings: '', KnownLeader: false, LastContact: 0 });
    expect(reply.EvalID).toMatch(UUID_RE);
    expect(reply.JobModifyIndex).toBe(reply.EvalCreateIndex);
    expect(reply.Index).toBe(reply.JobModifyIndex);
    expect(res.headers.get('x-scheduler-index')).toBe(String(reply.Index));

    const read = await api('GET', '/v1/job/reg-new');
    const job = read.json<Json>();
    expect(job).toMatchObject({
      ID: 'reg-new',
      Name: 'reg-new',
      Namespace: 'default',
      Region: 'global',
      Type: 'service',
      Priority: 50,
      Datacenters: ['*'],
      Version: 0,
      Stable: false,
      Stop: false,
      Status: 'running',
      CreateIndex: reply.JobModifyIndex,
      JobModifyIndex: reply.JobModifyIndex,
    });
    // Placing the allocations changed the status, which bumps ModifyIndex but not JobModifyIndex.
    expect(job.ModifyIndex as number).toBeGreaterThan(reply.JobModifyIndex as number);
    expect(read.headers.get('x-scheduler-index')).toBe(String(job.ModifyIndex));
    expect(read.headers.get('x-nomad-index')).toBe(String(job.ModifyIndex));
    expect(Number.isInteger(job.SubmitTime)).toBe(true);
    const group = (job.TaskGroups as Json[])[0]!;
    expect(group).toMatchObject({
      Count: 1,
      EphemeralDisk: { SizeMB: 300 },
      RestartPolicy: { Attempts: 2, Mode: 'fail' },
    });
    expect((group.Tasks as Json[])[0]).toMatchObject({
      Resources: { CPU: 100, MemoryMB: 300 },
      KillTimeout: 5e9,
    });
  });

  it('fills Count 1 when a group has none, and a batch job gets batch restart defaults', async () => {
    const spec = jobSpec('reg-batch', { b: 1 }, { Type: 'batch' });
    delete ((spec.TaskGroups as Json[])[0] as Json).Count;
    await register(api, spec);
    const job = await getJson(api, '/v1/job/reg-batch');
    expect((job.TaskGroups as Json[])[0]).toMatchObject({ Count: 1, RestartPolicy: { Attempts: 3 } });
  });

  it('accepts POST and PUT on /v1/job/:id, whose ID must match the body', async () => {
    expect((await api('POST', '/v1/job/reg-path', { body: { Job: jobSpec('reg-path') } })).status).toBe(200);
    const bad = await api('PUT', '/v1/job/other', { body: { Job: jobSpec('reg-path') } });
    expect(bad.status).toBe(400);
    expect(bad.text).toBe('Job ID does not match name');
    expect(bad.headers.get('content-type')).toContain('text/plain');
  });

  it('creates a complete job-register evaluation that placed one allocation per Count', async () => {
    const reply = await register(api, jobSpec('reg-eval', { web: 3, cache: 2 }));
    const evals = await evalsOf('reg-eval');
    expect(evals).toHaveLength(1);
    expect(evals[0]).toMatchObject({
      ID: reply.EvalID,
      TriggeredBy: 'job-register',
      Status: 'complete',
      JobID: 'reg-eval',
      JobModifyIndex: reply.JobModifyIndex,
      Type: 'service',
      Priority: 50,
      QueuedAllocations: { web: 0, cache: 0 },
      CreateIndex: reply.EvalCreateIndex,
    });
    const allocs = await allocsOf('reg-eval');
    expect(allocs).toHaveLength(5);
    expect(allocs.map((a) => a.Name).sort()).toEqual([
      'reg-eval.cache[0]',
      'reg-eval.cache[1]',
      'reg-eval.web[0]',
      'reg-eval.web[1]',
      'reg-eval.web[2]',
    ]);
    for (const a of allocs) {
      expect(a).toMatchObject({
        EvalID: reply.EvalID,
        JobID: 'reg-eval',
        DesiredStatus: 'run',
        ClientStatus: 'running',
      });
      expect((a.TaskStates as Record<string, Json>).app).toMatchObject({ State: 'running', Failed: false });
      expect(a).not.toHaveProperty('JobCreateIndex');
    }
    // Round robin: five placements over four nodes use every node.
    expect(new Set(allocs.map((a) => a.NodeName))).toEqual(new Set(['n1', 'n2', 'n3', 'e1']));
  });

  it('places only on nodes of the job datacenters (globs allowed)', async () => {
    await register(api, jobSpec('reg-dc', { web: 4 }, { Datacenters: ['dc*'] }));
    const nodes = new Set((await allocsOf('reg-dc')).map((a) => a.NodeName));
    expect(nodes).toEqual(new Set(['n1', 'n2', 'n3']));
  });

  it('without any matching node: the evaluation has failed placements and a blocked follow-up; the job stays pending', async () => {
    // No update strategy, so no deployment: a running deployment would make the job `running`, as
    // the real status rules say (scheduler-deployments.test.ts covers that case).
    await register(
      api,
      jobSpec('reg-nodc', { web: 2 }, { Datacenters: ['mars'], Update: { MaxParallel: 0 } }),
    );
    const evals = await evalsOf('reg-nodc');
    const first = evals.find((e) => e.TriggeredBy === 'job-register')!;
    const blocked = evals.find((e) => e.Status === 'blocked')!;
    expect(first).toMatchObject({
      Status: 'complete',
      QueuedAllocations: { web: 2 },
      BlockedEval: blocked.ID,
    });
    expect(first.FailedTGAllocs).toHaveProperty('web');
    expect(blocked).toMatchObject({ TriggeredBy: 'queued-allocs', PreviousEval: first.ID });
    expect((await getJson(api, '/v1/job/reg-nodc')).Status).toBe('pending');
    expect(await allocsOf('reg-nodc')).toEqual([]);
    const summary = await getJson(api, '/v1/job/reg-nodc/summary');
    expect(summary.Summary).toEqual({
      web: { Queued: 2, Complete: 0, Failed: 0, Running: 0, Starting: 0, Lost: 0, Unknown: 0 },
    });
  });

  it('a job with no allocations to place is dead once evaluated', async () => {
    await register(api, jobSpec('reg-zero', { web: 0 }));
    expect((await getJson(api, '/v1/job/reg-zero')).Status).toBe('dead');
  });
});

describe('update', () => {
  it('a changed spec is a new version with a new JobModifyIndex; CreateIndex stays', async () => {
    const first = await register(api, jobSpec('upd', { web: 1 }));
    const second = await register(api, jobSpec('upd', { web: 1 }, { Meta: { owner: 'ops' } }));
    expect(second.JobModifyIndex).toBeGreaterThan(first.JobModifyIndex);
    const job = await getJson(api, '/v1/job/upd');
    expect(job).toMatchObject({
      Version: 1,
      CreateIndex: first.JobModifyIndex,
      JobModifyIndex: second.JobModifyIndex,
      Meta: { owner: 'ops' },
    });
  });

  it('an identical register stores no new version and keeps JobModifyIndex, but still evaluates', async () => {
    const first = await register(api, jobSpec('same', { web: 2 }));
    const before = await getJson(api, '/v1/job/same');
    // Key order and server fields do not count as changes.
    const again = await register(api, { ...jobSpec('same', { web: 2 }), Version: 7, Status: 'dead' });
    expect(again.JobModifyIndex).toBe(first.JobModifyIndex);
    expect(again.EvalID).not.toBe(first.EvalID);
    expect(again.EvalCreateIndex).toBeGreaterThan(first.EvalCreateIndex);
    const after = await getJson(api, '/v1/job/same');
    expect(after.Version).toBe(0);
    expect(after.JobModifyIndex).toBe(before.JobModifyIndex);
    expect((await getJson<{ Versions: Json[] }>(api, '/v1/job/same/versions')).Versions).toHaveLength(1);
    expect(await evalsOf('same')).toHaveLength(2);
    expect(running(await allocsOf('same'))).toHaveLength(2); // nothing replaced
  });

  it('a count change keeps the running allocations and stops or adds the difference', async () => {
    await register(api, jobSpec('cnt', { web: 3 }));
    const before = running(await allocsOf('cnt'));
    await register(api, jobSpec('cnt', { web: 1 }));
    const allocs = await allocsOf('cnt');
    const kept = running(allocs);
    expect(kept.map((a) => a.Name)).toEqual(['cnt.web[0]']);
    expect(kept[0]!.ID).toBe(before.find((a) => a.Name === 'cnt.web[0]')!.ID);
    const stopped = allocs.filter((a) => a.DesiredStatus === 'stop');
    expect(stopped).toHaveLength(2);
    for (const a of stopped)
      expect(a).toMatchObject({
        ClientStatus: 'complete',
        DesiredDescription: 'alloc not needed due to job update',
      });
    await register(api, jobSpec('cnt', { web: 2 }));
    expect(
      running(await allocsOf('cnt'))
        .map((a) => a.Name)
        .sort(),
    ).toEqual(['cnt.web[0]', 'cnt.web[1]']);
  });

  it('a changed group spec replaces its allocations', async () => {
    await register(api, jobSpec('destr', { web: 2 }));
    const old = running(await allocsOf('destr')).map((a) => a.ID);
    const changed = jobSpec('destr', { web: 2 });
    ((changed.TaskGroups as Json[])[0]!.Tasks as Json[])[0]!.Config = { image: 'nginx:1.28' };
    await register(api, changed);
    const now = running(await allocsOf('destr'));
    expect(now).toHaveLength(2);
    for (const a of now) expect(old).not.toContain(a.ID);
    const replaced = (await allocsOf('destr')).filter((a) => old.includes(a.ID));
    for (const a of replaced) expect(a.DesiredDescription).toBe('alloc is being updated due to job update');
  });

  it("replaces allocations for a change of the job's Meta (its tasks see it), as the plan says", async () => {
    await register(api, jobSpec('meta-destr', { web: 1 }));
    const old = running(await allocsOf('meta-destr')).map((a) => a.ID);
    const plan = await api('POST', '/v1/job/meta-destr/plan', {
      body: { Job: jobSpec('meta-destr', { web: 1 }, { Meta: { owner: 'converge' } }), Diff: true },
    });
    expect(plan.json<Json>().Annotations).toMatchObject({
      DesiredTGUpdates: { web: { DestructiveUpdate: 1, InPlaceUpdate: 0 } },
    });
    await register(api, jobSpec('meta-destr', { web: 1 }, { Meta: { owner: 'converge' } }));
    const now = running(await allocsOf('meta-destr'));
    expect(now).toHaveLength(1);
    expect(old).not.toContain(now[0]!.ID);
    expect(now[0]!.JobVersion).toBe(1);
  });

  it('updates allocations in place for an in-place change (a restart policy), as the plan says', async () => {
    await register(api, jobSpec('inplace', { web: 2 }));
    const old = running(await allocsOf('inplace'))
      .map((a) => a.ID)
      .sort();
    const changed = jobSpec('inplace', { web: 2 });
    (changed.TaskGroups as Json[])[0]!.RestartPolicy = { Attempts: 7, Mode: 'fail' };
    const plan = await api('POST', '/v1/job/inplace/plan', { body: { Job: changed, Diff: true } });
    expect(plan.json<Json>().Annotations).toMatchObject({
      DesiredTGUpdates: { web: { InPlaceUpdate: 2, DestructiveUpdate: 0 } },
    });
    await register(api, changed);
    const now = running(await allocsOf('inplace'));
    expect(now.map((a) => a.ID).sort()).toEqual(old);
    for (const a of now) expect(a.JobVersion).toBe(1);
  });

  it('PreserveCounts keeps the stored counts of existing groups', async () => {
    await register(api, jobSpec('keep', { web: 3 }));
    await register(api, jobSpec('keep', { web: 1, extra: 2 }, { Meta: { v: '2' } }), {
      PreserveCounts: true,
    });
    const job = await getJson(api, '/v1/job/keep');
    expect((job.TaskGroups as Json[]).map((g) => [g.Name, g.Count])).toEqual([
      ['web', 3],
      ['extra', 2],
    ]);
  });

  it('refuses a type change', async () => {
    await register(api, jobSpec('typed'));
    const res = await api('PUT', '/v1/jobs', {
      body: { Job: jobSpec('typed', { web: 1 }, { Type: 'batch' }) },
    });
    expect(res.status).toBe(500);
    expect(res.text).toBe('cannot update job from type "service" to "batch"');
  });
});

describe('EnforceIndex (check-and-set)', () => {
  it('index 0 registers only a new job', async () => {
    expect(
      (await api('PUT', '/v1/jobs', { body: { Job: jobSpec('cas'), EnforceIndex: true, JobModifyIndex: 0 } }))
        .status,
    ).toBe(200);
    const again = await api('PUT', '/v1/jobs', {
      body: { Job: jobSpec('cas'), EnforceIndex: true, JobModifyIndex: 0 },
    });
    expect(again.status).toBe(500);
    expect(again.text).toBe('Enforcing job modify index 0: job already exists');
  });

  it('applies only when JobModifyIndex equals the stored one', async () => {
    const first = await register(api, jobSpec('cas2'));
    const stale = first.JobModifyIndex + 100;
    const bad = await api('PUT', '/v1/jobs', {
      body: { Job: jobSpec('cas2', { web: 2 }), EnforceIndex: true, JobModifyIndex: stale },
    });
    expect(bad.status).toBe(500);
    expect(bad.text).toBe(
      `Enforcing job modify index ${stale}: job exists with conflicting job modify index: ${first.JobModifyIndex}`,
    );
    expect((await getJson(api, '/v1/job/cas2')).Version).toBe(0); // nothing applied
    const good = await api('PUT', '/v1/jobs', {
      body: { Job: jobSpec('cas2', { web: 2 }), EnforceIndex: true, JobModifyIndex: first.JobModifyIndex },
    });
    expect(good.status).toBe(200);
    expect((await getJson(api, '/v1/job/cas2')).Version).toBe(1);
  });

  it('a non-zero index for a missing job is refused', async () => {
    const res = await api('PUT', '/v1/jobs', {
      body: { Job: jobSpec('cas-missing'), EnforceIndex: true, JobModifyIndex: 5 },
    });
    expect(res.status).toBe(500);
    expect(res.text).toBe('Enforcing job modify index 5: job does not exist');
  });

  it('without EnforceIndex the JobModifyIndex is ignored', async () => {
    await register(api, jobSpec('cas-off'));
    expect(
      (await api('PUT', '/v1/jobs', { body: { Job: jobSpec('cas-off'), JobModifyIndex: 999 } })).status,
    ).toBe(200);
  });
});

describe('versions', () => {
  it('lists versions newest first, keeps the last six, and 404s for a missing job', async () => {
    for (let v = 0; v < 8; v++) await register(api, jobSpec('hist', { web: 1 }, { Meta: { v: String(v) } }));
    const res = await api('GET', '/v1/job/hist/versions');
    const body = res.json<{ Versions: Json[]; Diffs: unknown; Index: number; KnownLeader: boolean }>();
    expect(body.Diffs).toBeNull();
    expect(body.KnownLeader).toBe(true);
    expect(body.Versions.map((j) => j.Version)).toEqual([7, 6, 5, 4, 3, 2]);
    expect(body.Versions.map((j) => (j.Meta as Json).v)).toEqual(['7', '6', '5', '4', '3', '2']);
    for (const j of body.Versions) expect(j.Stable).toBe(false);
    const missing = await api('GET', '/v1/job/nope/versions');
    expect(missing.status).toBe(404);
    expect(missing.text).toBe('job versions not found');
  });
});

describe('versions and stability together', () => {
  it('a blocking read of versions wakes when an older version is marked stable, with that index', async () => {
    await register(api, jobSpec('vblock'));
    await register(api, jobSpec('vblock', { web: 2 }));
    const first = await api('GET', '/v1/job/vblock/versions');
    const index = Number(first.headers.get('x-scheduler-index'));
    const held = api('GET', `/v1/job/vblock/versions?index=${index}&wait=5s`);
    await new Promise((r) => setTimeout(r, 100));
    await api('PUT', '/v1/job/vblock/stable', { body: { JobID: 'vblock', JobVersion: 0, Stable: true } });
    const woken = await held;
    expect(Number(woken.headers.get('x-scheduler-index'))).toBeGreaterThan(index);
    const versions = woken.json<{ Versions: Json[] }>().Versions;
    expect(versions.find((v) => v.Version === 0)!.Stable).toBe(true);
  });
});

describe('stability', () => {
  it("sets a version's Stable flag without a new version or JobModifyIndex", async () => {
    const first = await register(api, jobSpec('stab'));
    await register(api, jobSpec('stab', { web: 2 }));
    const before = await getJson(api, '/v1/job/stab');
    const res = await api('PUT', '/v1/job/stab/stable', {
      body: { JobID: 'stab', JobVersion: 1, Stable: true },
    });
    expect(res.status).toBe(200);
    const reply = res.json<{ Index: number; JobModifyIndex: number }>();
    expect(reply.Index).toBeGreaterThan(before.ModifyIndex as number);
    expect(reply.JobModifyIndex).toBe(before.JobModifyIndex);
    const job = await getJson(api, '/v1/job/stab');
    expect(job).toMatchObject({
      Stable: true,
      Version: 1,
      JobModifyIndex: before.JobModifyIndex,
      ModifyIndex: reply.Index,
    });
    // An older version too; then back to false.
    await api('POST', '/v1/job/stab/stable', { body: { JobID: 'stab', JobVersion: 0, Stable: true } });
    await api('POST', '/v1/job/stab/stable', { body: { JobID: 'stab', JobVersion: 1, Stable: false } });
    const versions = (await getJson<{ Versions: Json[] }>(api, '/v1/job/stab/versions')).Versions;
    expect(versions.map((v) => [v.Version, v.Stable])).toEqual([
      [1, false],
      [0, true],
    ]);
    expect(first.JobModifyIndex).toBeLessThan(before.JobModifyIndex as number);
  });

  it.each([
    [{ JobVersion: 0, Stable: true }, 400, 'JobID must be specified'],
    [{ JobID: 'other', Stable: true }, 400, 'Job ID does not match'],
    [
      { JobID: 'stab', JobVersion: 9, Stable: true },
      500,
      'job "stab" in namespace "default" at version 9 not found',
    ],
  ])('refuses %j', async (body, status, text) => {
    const res = await api('PUT', '/v1/job/stab/stable', { body });
    expect([res.status, res.text]).toEqual([status, text]);
  });
});

describe('stop and purge', () => {
  it('stop: a new version with Stop true, allocations stopped, a job-deregister evaluation, status dead', async () => {
    const reg = await register(api, jobSpec('stopme', { web: 2 }));
    const res = await api('DELETE', '/v1/job/stopme');
    expect(res.status).toBe(200);
    const reply = res.json<Json>();
    expect(reply.JobModifyIndex as number).toBeGreaterThan(reg.JobModifyIndex);
    expect(reply.EvalCreateIndex).toBe(reply.JobModifyIndex);
    const job = await getJson(api, '/v1/job/stopme');
    expect(job).toMatchObject({
      Stop: true,
      Status: 'dead',
      Version: 1,
      JobModifyIndex: reply.JobModifyIndex,
    });
    const allocs = await allocsOf('stopme');
    expect(allocs).toHaveLength(2);
    for (const a of allocs) {
      expect(a).toMatchObject({ DesiredStatus: 'stop', ClientStatus: 'complete' });
      expect((a.TaskStates as Record<string, Json>).app!.State).toBe('dead');
    }
    const evals = await evalsOf('stopme');
    expect(evals.find((e) => e.ID === reply.EvalID)).toMatchObject({
      TriggeredBy: 'job-deregister',
      Status: 'complete',
    });
    const summary = await getJson(api, '/v1/job/stopme/summary');
    expect(summary.Summary).toMatchObject({ web: { Running: 0, Complete: 2 } });
    // Registering it again runs it again as a new version.
    await register(api, jobSpec('stopme', { web: 2 }));
    expect(await getJson(api, '/v1/job/stopme')).toMatchObject({
      Stop: false,
      Status: 'running',
      Version: 2,
    });
  });

  it('purge: the job and its versions are gone at once; its allocations remain visible, stopped', async () => {
    const reg = await register(api, jobSpec('purgeme', { web: 1 }));
    const res = await api('DELETE', '/v1/job/purgeme?purge=true');
    expect(res.status).toBe(200);
    const read = await api('GET', '/v1/job/purgeme');
    expect(read.status).toBe(404);
    expect(read.text).toBe('job not found');
    expect((await api('GET', '/v1/job/purgeme/versions')).status).toBe(404);
    expect((await api('GET', '/v1/job/purgeme/summary')).status).toBe(404);
    expect((await getJson<Json[]>(api, '/v1/jobs?prefix=purgeme')).length).toBe(0);
    const allocs = await allocsOf('purgeme');
    expect(allocs.map((a) => a.DesiredStatus)).toEqual(['stop']);

    // A new job with the same ID is a new instance: version 0, new CreateIndex, its own allocations.
    const again = await register(api, jobSpec('purgeme', { web: 1 }));
    const job = await getJson(api, '/v1/job/purgeme');
    expect(job).toMatchObject({ Version: 0, CreateIndex: again.JobModifyIndex });
    expect(job.CreateIndex).not.toBe(reg.JobModifyIndex);
    expect((await allocsOf('purgeme')).map((a) => a.DesiredStatus)).toEqual(['run']);
    expect(await allocsOf('purgeme', '?all=true')).toHaveLength(2);
  });

  it('stopping a missing job succeeds with empty fields; a bad purge value is an error', async () => {
    const res = await api('DELETE', '/v1/job/never-there');
    expect(res.status).toBe(200);
    expect(res.json()).toMatchObject({ EvalID: '', EvalCreateIndex: 0, JobModifyIndex: 0 });
    const bad = await api('DELETE', '/v1/job/never-there?purge=maybe');
    expect(bad.status).toBe(500);
    expect(bad.text).toContain('Failed to parse value of "purge" (maybe) as a bool');
  });
});

describe('read query parameters', () => {
  it.each([
    ['/v1/jobs?wait=soon', 'Invalid wait time'],
    ['/v1/jobs?index=-1', 'Invalid index'],
    ['/v1/jobs?index=18446744073709551616', 'Invalid index'],
    ['/v1/job/never-there/allocations?index=1e3', 'Invalid index'],
    ['/v1/jobs?meta=maybe', 'Failed to parse value of "meta" (maybe) as a bool'],
  ])('refuses %s with 400 before reading', async (path, text) => {
    const res = await api('GET', path);
    expect(res.status).toBe(400);
    expect(res.text).toContain(text);
  });
});

describe('list', () => {
  beforeAll(async () => {
    await register(api, jobSpec('lst-a'));
    await register(api, jobSpec('lst-b'));
    await register(api, jobSpec('lst-a'), {}, { headers: {} });
    await api('PUT', '/v1/jobs?namespace=team-a', { body: { Job: jobSpec('lst-a') } });
    await api('PUT', '/v1/jobs', { body: { Job: jobSpec('lst-c', { web: 1 }, { Namespace: 'team-b' }) } });
  });

  it('lists the default namespace, sorted by ID, with header fields and the summary', async () => {
    const res = await api('GET', '/v1/jobs?prefix=lst-');
    const items = res.json<Json[]>();
    expect(items.map((j) => j.ID)).toEqual(['lst-a', 'lst-b']);
    expect(items[0]).toMatchObject({
      Namespace: 'default',
      Type: 'service',
      Priority: 50,
      Status: 'running',
      ParentID: '',
    });
    expect(items[0]!.JobSummary).toMatchObject({ JobID: 'lst-a', Summary: { web: { Running: 1 } } });
    // The stub's fields (order is no part of JSON's meaning; this pins the set and the sandbox's order).
    expect(Object.keys(items[0]!)).toEqual([
      'ID',
      'ParentID',
      'Name',
      'Namespace',
      'Datacenters',
      'Type',
      'Priority',
      'Stop',
      'Status',
      'StatusDescription',
      'SubmitTime',
      'CreateIndex',
      'ModifyIndex',
      'JobModifyIndex',
      'Periodic',
      'ParameterizedJob',
      'JobSummary',
    ]);
    expect(res.headers.get('x-scheduler-index')).toMatch(/^\d+$/);
  });

  it('filters by namespace and by ID prefix, and * lists every namespace', async () => {
    expect((await getJson<Json[]>(api, '/v1/jobs?namespace=team-a')).map((j) => j.ID)).toEqual(['lst-a']);
    expect((await getJson<Json[]>(api, '/v1/jobs?namespace=team-b&prefix=lst')).map((j) => j.ID)).toEqual([
      'lst-c',
    ]);
    expect((await getJson<Json[]>(api, '/v1/jobs?prefix=lst-b')).map((j) => j.ID)).toEqual(['lst-b']);
    const all = await getJson<Json[]>(api, '/v1/jobs?namespace=*&prefix=lst-');
    expect(all.map((j) => `${String(j.Namespace)}/${String(j.ID)}`)).toEqual([
      'default/lst-a',
      'default/lst-b',
      'team-a/lst-a',
      'team-b/lst-c',
    ]);
  });

  it("carries each job's Meta only when asked with meta=true, and leaves it out for a job without one", async () => {
    await register(api, jobSpec('lst-meta', { web: 1 }, { Meta: { owner: 'team-a', 'managed-by': 'x' } }));
    const plain = await getJson<Json[]>(api, '/v1/jobs?prefix=lst-');
    expect(plain.every((j) => !('Meta' in j))).toBe(true);

    const withMeta = await getJson<Json[]>(api, '/v1/jobs?prefix=lst-&meta=true');
    const byId = new Map(withMeta.map((j) => [j.ID, j]));
    expect(byId.get('lst-meta')!.Meta).toEqual({ owner: 'team-a', 'managed-by': 'x' });
    // The real stub's Meta is `omitempty`: a job with no Meta has no key, even when asked.
    expect('Meta' in byId.get('lst-a')!).toBe(false);
    // Go's ParseBool spellings; an empty value is the same as leaving the parameter out.
    expect((await getJson<Json[]>(api, '/v1/jobs?prefix=lst-meta&meta=1'))[0]!.Meta).toBeDefined();
    expect('Meta' in (await getJson<Json[]>(api, '/v1/jobs?prefix=lst-meta&meta=false'))[0]!).toBe(false);
    expect('Meta' in (await getJson<Json[]>(api, '/v1/jobs?prefix=lst-meta&meta='))[0]!).toBe(false);
  });

  it('refuses a meta value that is not a boolean with 400', async () => {
    const res = await api('GET', '/v1/jobs?meta=yes%0Aplease');
    expect(res.status).toBe(400);
    expect(res.text).toContain('Failed to parse value of "meta"');
  });

  it('reads in a namespace need ?namespace=', async () => {
    expect((await api('GET', '/v1/job/lst-c')).status).toBe(404);
    expect((await getJson(api, '/v1/job/lst-c?namespace=team-b')).Namespace).toBe('team-b');
  });

  it('refuses a namespace that does not exist', async () => {
    const res = await api('PUT', '/v1/jobs?namespace=nowhere', { body: { Job: jobSpec('lost') } });
    expect(res.status).toBe(500);
    expect(res.text).toBe('job "lost" is in nonexistent namespace "nowhere"');
  });
});

describe('summary', () => {
  it('counts allocations per group', async () => {
    const reg = await register(api, jobSpec('sum', { a: 2, b: 1 }));
    const res = await api('GET', '/v1/job/sum/summary');
    const s = res.json<Json>();
    expect(s).toMatchObject({
      JobID: 'sum',
      Namespace: 'default',
      Children: { Pending: 0, Running: 0, Dead: 0 },
      CreateIndex: reg.JobModifyIndex,
    });
    expect(s.Summary).toMatchObject({ a: { Running: 2, Queued: 0 }, b: { Running: 1 } });
    expect(res.headers.get('x-scheduler-index')).toBe(String(s.ModifyIndex));
    const missing = await api('GET', '/v1/job/nothing/summary');
    expect([missing.status, missing.text]).toEqual([404, 'job not found']);
  });

  it('allocations and evaluations of a missing job are empty lists', async () => {
    expect(await allocsOf('ghost')).toEqual([]);
    expect(await evalsOf('ghost')).toEqual([]);
  });
});

describe('blocking queries', () => {
  it('a read with ?index waits for the next change of the job', async () => {
    const reg = await register(api, jobSpec('blk'));
    const job = await getJson(api, '/v1/job/blk');
    const pending = api('GET', `/v1/job/blk?index=${String(job.ModifyIndex)}&wait=5s`);
    await new Promise((r) => setTimeout(r, 100));
    const upd = await register(api, jobSpec('blk', { web: 2 }));
    const res = await pending;
    expect(res.status).toBe(200);
    expect(res.json<Json>().JobModifyIndex).toBe(upd.JobModifyIndex);
    expect(upd.JobModifyIndex).toBeGreaterThan(reg.JobModifyIndex);
  });

  it('a bad index is 400', async () => {
    expect((await api('GET', '/v1/jobs?index=x')).status).toBe(400);
  });
});

describe('request errors', () => {
  it.each([
    ['malformed JSON', { rawBody: '{"Job": ' }, 400, undefined],
    ['no Job', { body: {} }, 400, 'Job must be specified'],
    ['no Job ID', { body: { Job: { Name: 'x' } } }, 400, "Job ID hasn't been provided"],
    ['a Job that is not an object', { body: { Job: 'web' } }, 400, undefined],
    [
      'a Count that is not a number',
      { body: { Job: { ID: 'x', TaskGroups: [{ Name: 'g', Count: 'two' }] } } },
      400,
      undefined,
    ],
    ['a non-boolean EnforceIndex', { body: { Job: jobSpec('x'), EnforceIndex: 'yes' } }, 400, undefined],
    [
      'a CPU that is not a number',
      {
        body: {
          Job: {
            ID: 'x',
            TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'docker', Resources: { CPU: 'lots' } }] }],
          },
        },
      },
      400,
      'json: cannot unmarshal Job.TaskGroups[0].Tasks[0].Resources.CPU: expected integer',
    ],
    [
      'a MemoryMB that is a fraction',
      {
        body: {
          Job: {
            ID: 'x',
            TaskGroups: [
              { Name: 'g', Tasks: [{ Name: 't', Driver: 'docker', Resources: { MemoryMB: 1.5 } }] },
            ],
          },
        },
      },
      400,
      'json: cannot unmarshal Job.TaskGroups[0].Tasks[0].Resources.MemoryMB: expected integer',
    ],
  ])('%s: %s', async (_label, opts, status, text) => {
    const res = await api('PUT', '/v1/jobs', opts);
    expect(res.status).toBe(status);
    if (text) expect(res.text).toBe(text);
  });

  it('validation failures are 500 with the real multierror text', async () => {
    const res = await api('PUT', '/v1/jobs', {
      body: { Job: { ID: 'bad job', Priority: 500, TaskGroups: [] } },
    });
    expect(res.status).toBe(500);
    expect(res.text).toBe(
      '3 errors occurred:\n\t* Job ID contains a space\n\t* Job priority must be between [1, 100]\n\t* Missing job task groups\n\n',
    );
    const group = await api('PUT', '/v1/jobs', {
      body: { Job: { ID: 'g', TaskGroups: [{ Name: 'web', Count: -1, Tasks: [] }] } },
    });
    expect(group.status).toBe(500);
    expect(group.text).toContain(
      "Task group web validation failed: 2 errors occurred:\n\t* Task group count can't be negative",
    );
  });

  it('wrong methods are 405 "Invalid method"', async () => {
    await register(api, jobSpec('meth'));
    for (const [method, path] of [
      ['DELETE', '/v1/jobs'],
      ['POST', '/v1/job/meth/versions'],
      ['DELETE', '/v1/job/meth/allocations'],
    ] as const) {
      const res = await api(method, path);
      expect([method, path, res.status, res.text]).toEqual([method, path, 405, 'Invalid method']);
    }
  });
});

describe('not emulated yet', () => {
  it.each([
    ['GET', '/v1/jobs/statuses'],
    ['GET', '/v1/job/x/submission'],
  ])('%s %s answers 501 in plain text', async (method, path) => {
    const res = await api(method, path, method === 'GET' ? {} : { body: {} });
    expect(res.status).toBe(501);
    expect(res.text).toMatch(/^not emulated yet: /);
    expect(res.headers.get('content-type')).toContain('text/plain');
  });

  it('job IDs with a slash still reach the job endpoints', async () => {
    await register(api, jobSpec('parent/child'));
    expect((await getJson(api, '/v1/job/parent/child')).ID).toBe('parent/child');
    expect(await allocsOf('parent/child')).toHaveLength(1);
  });
});
