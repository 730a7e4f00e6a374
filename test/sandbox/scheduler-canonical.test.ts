/**
 * The spec's job rows (part B, "Job (scheduler)") over HTTP: a job registered minimal reads back
 * whole, every listed field present with the real service's defaults for its type (null where
 * unused), and the submit tokens (`SecretsToken`, `RegistryToken`) are never stored, so no read,
 * list, version or plan answer carries them.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { type Api, apiFor, tempDir } from './helpers.js';
import { getJson, type Json, jobSpec, register } from './scheduler-helpers.js';

let sandbox: RunningSandbox;
let api: Api;

beforeAll(async () => {
  sandbox = await startSandbox({ config: { scheduler: {} } });
  api = apiFor(sandbox);
});

afterAll(async () => {
  await sandbox.close();
});

const S = 1_000_000_000;
const MIN = 60 * S;
const H = 60 * MIN;

/** A job as small as the service accepts: an ID and one group with one task. */
function minimalJob(id: string, type?: string): Json {
  return {
    ID: id,
    ...(type ? { Type: type } : {}),
    TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'docker' }] }],
  };
}

const groupOf = (job: Json) => (job.TaskGroups as Json[])[0]!;
const taskOf = (job: Json) => (groupOf(job).Tasks as Json[])[0]!;

/** The spec's lists, word for word. */
const JOB_FIELDS = [
  'ID',
  'ParentID',
  'Name',
  'Namespace',
  'Region',
  'Type',
  'Priority',
  'AllAtOnce',
  'Datacenters',
  'Constraints',
  'Affinities',
  'Spreads',
  'TaskGroups',
  'Update',
  'Periodic',
  'ParameterizedJob',
  'Payload',
  'Meta',
  'Multiregion',
  'Migrate',
  'Reschedule',
  'Stable',
  'Stop',
  'Dispatched',
  'Version',
  'SubmitTime',
  'Status',
  'StatusDescription',
  'CreateIndex',
  'ModifyIndex',
  'JobModifyIndex',
  'SecretsToken',
  'RegistryToken',
  'SchedulerTokenID',
  'SecretsNamespace',
];
const GROUP_FIELDS = [
  'Name',
  'Count',
  'Constraints',
  'Affinities',
  'Spreads',
  'Meta',
  'Tasks',
  'Networks',
  'Services',
  'Volumes',
  'Scaling',
  'ShutdownDelay',
  'StopAfterClientDisconnect',
  'RestartPolicy',
  'ReschedulePolicy',
  'EphemeralDisk',
  'Migrate',
  'Update',
];
const TASK_FIELDS = [
  'Name',
  'Driver',
  'User',
  'Config',
  'Env',
  'Meta',
  'Leader',
  'Kind',
  'KillTimeout',
  'KillSignal',
  'ShutdownDelay',
  'Lifecycle',
  'LogConfig',
  'Resources',
  'Services',
  'Templates',
  'Artifacts',
  'DispatchPayload',
  'Constraints',
  'Affinities',
  'RestartPolicy',
  'ScalingPolicies',
  'CSIPluginConfig',
  'VolumeMounts',
  'Secrets',
];

const missing = (o: Json, fields: string[]) => fields.filter((f) => !(f in o));

describe('Job (scheduler): a minimal job reads back with every listed field and its type’s defaults', () => {
  it('"Top-level fields seen: ID, ParentID, Name, … Constraints, Affinities, Spreads, … Multiregion, Migrate, Reschedule, … SecretsToken, RegistryToken, SchedulerTokenID, SecretsNamespace": a service job has them all, null where unused', async () => {
    await register(api, minimalJob('canon-svc'));
    const job = await getJson(api, '/v1/job/canon-svc');
    expect(missing(job, JOB_FIELDS)).toEqual([]);
    expect(job).toMatchObject({
      ID: 'canon-svc',
      ParentID: '',
      Name: 'canon-svc',
      Namespace: 'default',
      Type: 'service',
      Priority: 50,
      AllAtOnce: false,
      Datacenters: ['*'],
      Constraints: null,
      Affinities: null,
      Spreads: null,
      Periodic: null,
      ParameterizedJob: null,
      Payload: null,
      Meta: null,
      Multiregion: null,
      Migrate: null,
      Reschedule: null,
      Stop: false,
      Dispatched: false,
      SecretsToken: '',
      RegistryToken: '',
      SchedulerTokenID: '',
      SecretsNamespace: '',
    });
    // `Update` for a service job: the real default strategy, `Stagger` and `MaxParallel` included.
    expect(job.Update).toEqual({
      Stagger: 30 * S,
      MaxParallel: 1,
      HealthCheck: 'checks',
      MinHealthyTime: 10 * S,
      HealthyDeadline: 5 * MIN,
      ProgressDeadline: 10 * MIN,
      AutoRevert: false,
      Canary: 0,
      AutoPromote: false,
    });
  });

  it('"Task group: Name, Count, Constraints, … Networks, Services, Volumes, Scaling, … RestartPolicy, ReschedulePolicy, EphemeralDisk, Migrate, Update": a service group has the service defaults, unused blocks null', async () => {
    await register(api, minimalJob('canon-svc-tg'));
    const tg = groupOf(await getJson(api, '/v1/job/canon-svc-tg'));
    expect(missing(tg, GROUP_FIELDS)).toEqual([]);
    expect(tg).toMatchObject({
      Name: 'g',
      Count: 1,
      Constraints: null,
      Affinities: null,
      Spreads: null,
      Meta: null,
      Networks: null,
      Services: null,
      Volumes: null,
      Scaling: null,
      ShutdownDelay: null,
      StopAfterClientDisconnect: null,
    });
    expect(tg.RestartPolicy).toMatchObject({ Attempts: 2, Interval: 30 * MIN, Delay: 15 * S, Mode: 'fail' });
    expect(tg.ReschedulePolicy).toEqual({
      Attempts: 0,
      Interval: 0,
      Delay: 30 * S,
      DelayFunction: 'exponential',
      MaxDelay: H,
      Unlimited: true,
    });
    expect(tg.EphemeralDisk).toEqual({ Sticky: false, SizeMB: 300, Migrate: false });
    expect(tg.Migrate).toEqual({
      HealthCheck: 'checks',
      HealthyDeadline: 5 * MIN,
      MaxParallel: 1,
      MinHealthyTime: 10 * S,
    });
    expect(tg.Update).toMatchObject({ MaxParallel: 1, HealthCheck: 'checks', ProgressDeadline: 10 * MIN });
  });

  it('"Task: Name, Driver, User, Config, Env (map), Meta, … KillSignal, … RestartPolicy, … Secrets (integration block, null when unused)": a task has every listed field, its group’s restart policy', async () => {
    await register(api, minimalJob('canon-svc-task'));
    const job = await getJson(api, '/v1/job/canon-svc-task');
    const task = taskOf(job);
    expect(missing(task, TASK_FIELDS)).toEqual([]);
    expect(task).toMatchObject({
      Name: 't',
      Driver: 'docker',
      User: '',
      Config: null,
      Env: null,
      Meta: null,
      Leader: false,
      Kind: '',
      KillTimeout: 5 * S,
      KillSignal: '',
      ShutdownDelay: 0,
      Lifecycle: null,
      LogConfig: { MaxFiles: 10, MaxFileSizeMB: 10 },
      Services: null,
      Templates: null,
      Artifacts: null,
      DispatchPayload: null,
      Constraints: null,
      Affinities: null,
      ScalingPolicies: null,
      CSIPluginConfig: null,
      VolumeMounts: null,
      Secrets: null,
    });
    expect(task.Resources).toMatchObject({
      CPU: 100,
      MemoryMB: 300,
      DiskMB: 0,
      IOPS: 0,
      Devices: null,
      Networks: null,
    });
    expect(task.RestartPolicy).toEqual(groupOf(job).RestartPolicy);
  });

  it('"Observed Type values: service, batch": a minimal batch job gets the batch defaults (restart 3 in 24h, reschedule once a day) and no Migrate or Update', async () => {
    await register(api, minimalJob('canon-batch', 'batch'));
    const job = await getJson(api, '/v1/job/canon-batch');
    expect(missing(job, JOB_FIELDS)).toEqual([]);
    expect(job).toMatchObject({ Type: 'batch', Update: null, Migrate: null, Reschedule: null });
    const tg = groupOf(job);
    expect(missing(tg, GROUP_FIELDS)).toEqual([]);
    expect(tg.RestartPolicy).toMatchObject({ Attempts: 3, Interval: 24 * H, Delay: 15 * S, Mode: 'fail' });
    expect(tg.ReschedulePolicy).toEqual({
      Attempts: 1,
      Interval: 24 * H,
      Delay: 5 * S,
      DelayFunction: 'constant',
      MaxDelay: 0,
      Unlimited: false,
    });
    expect(tg).toMatchObject({ Migrate: null, Update: null, Count: 1 });
    expect(tg.EphemeralDisk).toEqual({ Sticky: false, SizeMB: 300, Migrate: false });
    const task = taskOf(job);
    expect(missing(task, TASK_FIELDS)).toEqual([]);
    expect(task).toMatchObject({ Env: null, Meta: null, Secrets: null, User: '', KillSignal: '' });
    expect(task.RestartPolicy).toEqual(tg.RestartPolicy);
  });

  it('"The full enumerations of Status and Type: not shown": system jobs restart as service jobs and do not reschedule; sysbatch as batch jobs', async () => {
    await register(api, minimalJob('canon-system', 'system'));
    const system = groupOf(await getJson(api, '/v1/job/canon-system'));
    expect(system.RestartPolicy).toMatchObject({ Attempts: 2, Interval: 30 * MIN });
    expect(system).toMatchObject({ ReschedulePolicy: null, Migrate: null });
    expect(system.Update).toMatchObject({ MaxParallel: 1 });
    await register(api, minimalJob('canon-sysbatch', 'sysbatch'));
    const sysbatch = groupOf(await getJson(api, '/v1/job/canon-sysbatch'));
    expect(sysbatch.RestartPolicy).toMatchObject({ Attempts: 3, Interval: 24 * H });
    expect(sysbatch).toMatchObject({ ReschedulePolicy: null, Migrate: null, Update: null });
  });

  it('job-level "Migrate" and "Reschedule" are kept, and merged under each group’s own', async () => {
    const job = minimalJob('canon-merge');
    job.Reschedule = { Attempts: 4, Interval: 2 * H };
    job.Migrate = { MaxParallel: 2 };
    groupOf(job).ReschedulePolicy = { Attempts: 7 };
    await register(api, job);
    const read = await getJson(api, '/v1/job/canon-merge');
    expect(read).toMatchObject({ Reschedule: { Attempts: 4, Interval: 2 * H }, Migrate: { MaxParallel: 2 } });
    const tg = groupOf(read);
    expect(tg.ReschedulePolicy).toMatchObject({ Attempts: 7, Interval: 2 * H, DelayFunction: 'exponential' });
    expect(tg.Migrate).toMatchObject({ MaxParallel: 2, HealthCheck: 'checks' });
  });

  it('the canonical job, read back and sent again, is no change: same version, and its plan diff is None', async () => {
    await register(api, minimalJob('canon-again'));
    const read = await getJson(api, '/v1/job/canon-again');
    const again = await register(api, read);
    expect(again.JobModifyIndex).toBe(read.JobModifyIndex);
    const plan = await api('POST', '/v1/job/canon-again/plan', { body: { Job: read, Diff: true } });
    expect(plan.json<Json>().Diff).toMatchObject({ Type: 'None' });
    const minimal = await api('POST', '/v1/job/canon-again/plan', {
      body: { Job: minimalJob('canon-again'), Diff: true },
    });
    expect(minimal.json<Json>().Diff).toMatchObject({ Type: 'None' });
    const versions = await getJson<{ Versions: Json[] }>(api, '/v1/job/canon-again/versions');
    expect(versions.Versions).toHaveLength(1);
  });

  it('"POST /v1/jobs/parse … Canonicalize (boolean false; fills unset fields with defaults)" fills the same defaults a register stores', async () => {
    const hcl =
      'job "canon-parse" {\n  group "g" {\n    task "t" {\n      driver = "docker"\n    }\n  }\n}\n';
    const res = await api('POST', '/v1/jobs/parse', { body: { JobHCL: hcl, Canonicalize: true } });
    const parsed = res.json<Json>();
    expect(
      missing(
        parsed,
        JOB_FIELDS.filter((f) => f !== 'SecretsToken' && f !== 'RegistryToken'),
      ),
    ).toEqual([]);
    await register(api, minimalJob('canon-parse'));
    const stored = await getJson(api, '/v1/job/canon-parse');
    expect(groupOf(parsed).ReschedulePolicy).toEqual(groupOf(stored).ReschedulePolicy);
    expect(groupOf(parsed).Migrate).toEqual(groupOf(stored).Migrate);
    expect(taskOf(parsed).RestartPolicy).toEqual(taskOf(stored).RestartPolicy);
  });
});

describe('Job (scheduler) "SecretsToken", "RegistryToken": used at registration, never stored', () => {
  const SECRETS = 's.secrets-token-7f3a91';
  const REGISTRY = 'r.registry-token-c20e44';
  const NATIVE = 'n.native-token-5d1b08';
  const withTokens = (id: string): Json => ({
    ...jobSpec(id),
    SecretsToken: SECRETS,
    RegistryToken: REGISTRY,
    // The real product's names for the same tokens.
    VaultToken: NATIVE,
    ConsulToken: NATIVE,
  });
  const leaks = (text: string) => [SECRETS, REGISTRY, NATIVE].filter((t) => text.includes(t));

  it('"SecretsToken", "RegistryToken" sent on register are absent from the read, list, versions and plan answers', async () => {
    await register(api, withTokens('tok-job'));
    await register(api, { ...withTokens('tok-job'), Priority: 60 });

    const read = await api('GET', '/v1/job/tok-job');
    expect(leaks(read.text)).toEqual([]);
    expect(read.json<Json>()).toMatchObject({ SecretsToken: '', RegistryToken: '' });
    expect(read.json<Json>()).not.toHaveProperty('VaultToken');
    expect(read.json<Json>()).not.toHaveProperty('ConsulToken');

    const list = await api('GET', '/v1/jobs?prefix=tok-');
    expect(list.status).toBe(200);
    expect(leaks(list.text)).toEqual([]);

    const versions = await api('GET', '/v1/job/tok-job/versions?diffs=true');
    expect(versions.json<{ Versions: Json[] }>().Versions).toHaveLength(2);
    expect(leaks(versions.text)).toEqual([]);

    for (const job of [withTokens('tok-job'), { ...withTokens('tok-job'), SecretsToken: 's.other-token' }]) {
      const plan = await api('POST', '/v1/job/tok-job/plan', { body: { Job: job, Diff: true } });
      expect(plan.status).toBe(200);
      expect(leaks(plan.text)).toEqual([]);
      expect(plan.text).not.toContain('s.other-token');
    }
  });

  it('a job sent with tokens and the same job without them are the same job: no new version, plan diff None', async () => {
    const first = await register(api, withTokens('tok-same'));
    const again = await register(api, jobSpec('tok-same'));
    expect(again.JobModifyIndex).toBe(first.JobModifyIndex);
    const plan = await api('POST', '/v1/job/tok-same/plan', {
      body: { Job: { ...jobSpec('tok-same'), SecretsToken: 's.changed' }, Diff: true },
    });
    expect(plan.json<Json>().Diff).toMatchObject({ Type: 'None' });
  });

  it('revert\'s "RegistryToken (string, default empty), SecretsToken (string, default empty)" are not stored in the reverted version', async () => {
    await register(api, jobSpec('tok-revert'));
    await register(api, { ...jobSpec('tok-revert'), Priority: 70 });
    const res = await api('POST', '/v1/job/tok-revert/revert', {
      body: { JobID: 'tok-revert', JobVersion: 0, SecretsToken: SECRETS, RegistryToken: REGISTRY },
    });
    expect(res.status).toBe(200);
    expect(leaks((await api('GET', '/v1/job/tok-revert')).text)).toEqual([]);
    expect(leaks((await api('GET', '/v1/job/tok-revert/versions')).text)).toEqual([]);
  });
});

describe('a state file written by an earlier sandbox (tokens stored, fields missing)', () => {
  it('reads back canonical, and without the "SecretsToken" and "RegistryToken" it stored', async () => {
    const dir = tempDir('scheduler-canonical');
    try {
      const first = await startSandbox({ dataDir: dir.path, config: { scheduler: {} } });
      await register(apiFor(first), minimalJob('old-state'));
      await first.close();
      // What an earlier sandbox stored: the tokens as sent, and none of the blocks it did not fill.
      const file = join(dir.path, 'scheduler.json');
      const doc = JSON.parse(readFileSync(file, 'utf8')) as { state: { jobs: { versions: Json[] }[] } };
      for (const version of doc.state.jobs[0]!.versions) {
        Object.assign(version, { SecretsToken: 's.stored-long-ago', VaultToken: 's.stored-long-ago' });
        for (const f of ['Migrate', 'Reschedule', 'Constraints']) delete version[f];
        delete groupOf(version).ReschedulePolicy;
        delete taskOf(version).Secrets;
      }
      writeFileSync(file, JSON.stringify(doc));

      const second = await startSandbox({ dataDir: dir.path, config: { scheduler: {} } });
      try {
        const read = await apiFor(second)('GET', '/v1/job/old-state');
        expect(read.text).not.toContain('s.stored-long-ago');
        const job = read.json<Json>();
        expect(missing(job, JOB_FIELDS)).toEqual([]);
        expect(groupOf(job).ReschedulePolicy).toMatchObject({ DelayFunction: 'exponential' });
        expect(taskOf(job).Secrets).toBeNull();
        expect(job.Version).toBe(0);
      } finally {
        await second.close();
      }
    } finally {
      dir.remove();
    }
  });
});
