/**
 * `converge job …` through the built CLI, as an operator runs it against the sandbox scheduler: what
 * each command prints, its exit code, and for writes the service's state afterwards (read back with
 * the client, not with the CLI under test).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Job, SchedulerClient } from '../../src/clients/scheduler/client.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { type CliResult, converge as run, manifestDir } from './helpers.js';

const ROOT_TOKEN = `root-${randomUUID()}`;
let sandbox: RunningSandbox;
let client: SchedulerClient;

beforeAll(async () => {
  sandbox = await startSandbox({
    port: 0,
    token: ROOT_TOKEN,
    config: { scheduler: { namespaces: ['team-a'] } },
  });
  client = SchedulerClient.fromConnection({ address: sandbox.url, token: ROOT_TOKEN });
});
afterAll(async () => {
  await client?.close();
  await sandbox?.close();
});

/** The built CLI with the sandbox's environment, plain output unless the test says otherwise. */
function converge(args: string[], env: Record<string, string> = {}, input?: string): Promise<CliResult> {
  return run(['job', ...args], { ...sandbox.env(), NO_COLOR: '1', ...env }, undefined, input);
}

let serial = 0;
/** A job ID no other test uses: the tests share one sandbox. */
function freshId(stem: string): string {
  serial += 1;
  return `${stem}-${serial}`;
}

function serviceJob(id: string, extra: Partial<Job> = {}): Job {
  return {
    ID: id,
    Name: id,
    Type: 'service',
    Datacenters: ['dc1'],
    TaskGroups: [
      {
        Name: 'api',
        Count: 2,
        Tasks: [
          {
            Name: 'server',
            Driver: 'docker',
            Config: { image: 'nginx:1.25' },
            Resources: { CPU: 100, MemoryMB: 64 },
          },
        ],
      },
    ],
    ...extra,
  };
}

function batchJob(id: string, extra: Partial<Job>): Job {
  return {
    ...serviceJob(id),
    Type: 'batch',
    TaskGroups: [
      {
        Name: 'run',
        Count: 1,
        Tasks: [
          {
            Name: 'main',
            Driver: 'exec',
            Config: { command: '/bin/true' },
            Resources: { CPU: 50, MemoryMB: 32 },
          },
        ],
      },
    ],
    ...extra,
  };
}

async function registered(job: Job, namespace?: string): Promise<Job> {
  const withNs = namespace ? { ...job, Namespace: namespace } : job;
  await client.registerJob(withNs, namespace ? { namespace } : {});
  return withNs;
}

/** The same job with a new image: a second version. */
function edited(job: Job, image: string): Job {
  const groups = job.TaskGroups!.map((g) => ({
    ...g,
    Tasks: (g.Tasks ?? []).map((t) => ({ ...t, Config: { ...(t.Config as object), image } })),
  }));
  return { ...job, TaskGroups: groups };
}

describe('converge job --help', () => {
  it.each([
    'status',
    'history',
    'allocs',
    'evals',
    'deployments',
    'plan',
    'dispatch',
    'revert',
    'stable',
    'evaluate',
    'force-periodic',
    'scale',
    'stop',
  ])('has help for job %s', async (sub) => {
    const r = await converge([sub, '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Usage: converge job ${sub}`);
    expect(r.stdout).toContain('--namespace <ns>');
  });
});

describe('job status', () => {
  it('shows the header, the group summary and the allocations of a job', async () => {
    const id = freshId('web');
    await registered(serviceJob(id));
    const r = await converge(['status', id]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines).toContain(`ID           ${id}`);
    expect(lines).toContain('Namespace    default');
    expect(lines).toContain('Type         service');
    expect(lines).toContain('Priority     50');
    expect(lines).toContain('Version      0');
    expect(lines).toContain('Datacenters  dc1');
    expect(r.stdout).toMatch(/^Submitted {4}\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/m);
    expect(r.stdout).toContain('Summary\nGROUP  QUEUED  STARTING  RUNNING  COMPLETE  FAILED  LOST');
    expect(r.stdout).toMatch(/^api {4}0 +0 +2 +0 +0 +0$/m);
    expect(r.stdout).toContain('Allocations\nID        GROUP  NODE    DESIRED  STATUS');
    // Two allocations, each under an 8-character ID.
    expect(r.stdout.match(/^[0-9a-f]{8} +api +node-\d +run +running +0 /gm)).toHaveLength(2);
  });

  it('shows the latest deployment with healthy/desired per group', async () => {
    const id = freshId('deployed');
    const job = serviceJob(id);
    job.TaskGroups![0]!.Update = { MaxParallel: 1 };
    await registered(job);
    const r = await converge(['status', id]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /^Latest Deployment\nID +[0-9a-f]{8}\nJob version +0\nStatus +(running|successful)$/m,
    );
    expect(r.stdout).toMatch(/^GROUP +DESIRED +PLACED +HEALTHY +UNHEALTHY\napi +2 +2 +\d\/2 +0$/m);
  });

  it('names the job and the namespace when there is no such job, and exits 1', async () => {
    const r = await converge(['status', 'no-such-job']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim()).toBe('Error: no job no-such-job in namespace default');

    const id = freshId('elsewhere');
    await registered(serviceJob(id), 'team-a');
    const wrongNs = await converge(['status', id]);
    expect(wrongNs.stderr.trim()).toBe(`Error: no job ${id} in namespace default`);
    const rightNs = await converge(['status', id, '--namespace', 'team-a']);
    expect(rightNs.code).toBe(0);
    expect(rightNs.stdout).toContain('Namespace    team-a');
  });

  it('lists jobs without JOB: by prefix, and across namespaces with --namespace *', async () => {
    const a = freshId('listed');
    const b = freshId('listed');
    const other = freshId('listed-team');
    await registered(serviceJob(a));
    await registered(serviceJob(b));
    await registered(serviceJob(other), 'team-a');

    const byPrefix = await converge(['status', '--prefix', 'listed-']);
    expect(byPrefix.code).toBe(0);
    const rows = byPrefix.stdout.trim().split('\n');
    expect(rows[0]).toMatch(/^ID +TYPE +PRIORITY +STATUS +SUBMITTED$/);
    expect(rows.slice(1).map((l) => l.split(/\s+/)[0])).toEqual([a, b]);

    const all = await converge(['status', '--namespace', '*', '--prefix', 'listed-team']);
    expect(all.stdout.trim().split('\n')[0]).toMatch(/^NAMESPACE +ID +TYPE/);
    expect(all.stdout).toMatch(new RegExp(`^team-a +${other} +service`, 'm'));

    const none = await converge(['status', '--prefix', 'nothing-starts-like-this']);
    expect(none.stdout.trim()).toBe('No jobs.');
  });

  it('--json prints the service objects', async () => {
    const id = freshId('json');
    await registered(serviceJob(id));
    const status = JSON.parse((await converge(['status', id, '--json'])).stdout) as {
      Job: Job;
      Summary: { Summary: Record<string, { Running: number }> };
      Allocations: unknown[];
    };
    expect(status.Job.ID).toBe(id);
    expect(status.Summary.Summary.api!.Running).toBe(2);
    expect(status.Allocations).toHaveLength(2);

    const list = JSON.parse((await converge(['status', '--prefix', id, '--json'])).stdout) as {
      ID: string;
    }[];
    expect(list.map((j) => j.ID)).toEqual([id]);
    const allocs = JSON.parse((await converge(['allocs', id, '--json'])).stdout) as { JobID: string }[];
    expect(allocs.map((a) => a.JobID)).toEqual([id, id]);
    const evals = JSON.parse((await converge(['evals', id, '--json'])).stdout) as { TriggeredBy: string }[];
    expect(evals[0]!.TriggeredBy).toBe('job-register');
    const history = JSON.parse((await converge(['history', id, '--json'])).stdout) as { Versions: Job[] };
    expect(history.Versions.map((v) => v.Version)).toEqual([0]);
  });
});

describe('--json and secrets', () => {
  it('masks the entries whose names say secret in every job it prints, as the text output and the plan do', async () => {
    const id = freshId('secret-json');
    const password = `registry-pw-${randomUUID()}`;
    const key = `aws-key-${randomUUID()}`;
    const job = serviceJob(id);
    const task = job.TaskGroups![0]!.Tasks![0]!;
    task.Config = { image: 'nginx:1.25', auth: { username: 'ci', password } };
    task.Env = { MODE: 'prod', AWS_SECRET_ACCESS_KEY: key };
    job.Meta = { owner: 'web', api_token: key };
    await registered(job);
    await registered(edited(job, 'nginx:1.26'));
    for (const args of [
      ['status', id, '--json'],
      ['history', id, '--json'],
      ['history', id, '--diffs', '--json'],
      ['allocs', id, '--json'],
    ]) {
      const r = await converge(args);
      expect(r.code, args.join(' ')).toBe(0);
      expect(r.stdout, args.join(' ')).not.toContain(password);
      expect(r.stdout, args.join(' ')).not.toContain(key);
    }
    const status = JSON.parse((await converge(['status', id, '--json'])).stdout) as { Job: Job };
    const shown = status.Job.TaskGroups![0]!.Tasks![0]!;
    // Masked, not dropped: the entries are there, and the others as the service gave them.
    expect(shown.Env).toEqual({ MODE: 'prod', AWS_SECRET_ACCESS_KEY: '(sensitive value)' });
    expect((shown.Config as { auth: unknown }).auth).toEqual({
      username: 'ci',
      password: '(sensitive value)',
    });
    expect(status.Job.Meta).toMatchObject({ owner: 'web', api_token: '(sensitive value)' });
  });
});

describe('copies of a secret under other names', () => {
  // A new-user trial: `job history --diffs` masked Env[DB_PASSWORD] and printed the same password in
  // Env[DSN] and in a task's args, old and new, where `converge plan` masks such copies.
  it('are masked wherever a job command prints them: history, status, allocs, job plan, text and --json', async () => {
    const id = freshId('secret-copies');
    const old = `dbpw-${randomUUID().slice(0, 8)}Xy9`;
    const next = `newpw-${randomUUID().slice(0, 8)}Qr4`;
    const planned = `planpw-${randomUUID().slice(0, 8)}Zk7`;
    const withPassword = (pw: string, job = serviceJob(id)): Job => {
      const task = job.TaskGroups![0]!.Tasks![0]!;
      task.Env = { DB_PASSWORD: pw, DSN: `postgres://u:${pw}@db/x` };
      task.Config = { image: 'nginx:1.25', args: ['--db', pw] };
      return job;
    };
    await registered(withPassword(old));
    await registered(withPassword(next));
    const dir = manifestDir({ 'job.json': JSON.stringify(withPassword(planned)) });
    const env = { ...sandbox.env(), NO_COLOR: '1' };
    for (const args of [
      ['history', id, '--diffs'],
      ['history', id, '--diffs', '--json'],
      ['history', id, '--json'],
      ['status', id, '--json'],
      ['allocs', id, '--json'],
    ]) {
      const r = await converge(args);
      expect(r.code, args.join(' ')).toBe(0);
      for (const pw of [old, next]) expect(r.stdout, args.join(' ')).not.toContain(pw);
    }
    const diffs = await converge(['history', id, '--diffs']);
    expect(diffs.stdout).toContain('(sensitive value changed)');
    expect(diffs.stdout).toContain('"postgres://u:(sensitive value)@db/x"');
    for (const flags of [[], ['--json'], ['--verbose']]) {
      const r = await run(['job', 'plan', `${dir}/job.json`, ...flags], env);
      expect(r.stderr, flags.join(' ')).toBe('');
      for (const pw of [old, next, planned]) expect(r.stdout, flags.join(' ')).not.toContain(pw);
    }
  });
});

describe('job history, stable', () => {
  it('lists versions newest first, and marks one stable or not', async () => {
    const id = freshId('hist');
    const v0 = await registered(serviceJob(id));
    await registered(edited(v0, 'nginx:1.26'));

    const marked = await converge(['stable', id, '0']);
    expect(marked.code).toBe(0);
    expect(marked.stdout.trim()).toBe(`Job ${id} version 0 marked stable`);
    const versions = (await client.jobVersions(id))!.Versions;
    expect(versions.find((v) => v.Version === 0)!.Stable).toBe(true);

    const r = await converge(['history', id]);
    expect(r.code).toBe(0);
    const rows = r.stdout.trim().split('\n');
    expect(rows[0]).toMatch(/^VERSION +STABLE +SUBMITTED$/);
    expect(rows[1]).toMatch(/^1 +false +\d{4}-/);
    expect(rows[2]).toMatch(/^0 +true +\d{4}-/);

    const unset = await converge(['stable', id, '0', '--unset']);
    expect(unset.stdout.trim()).toBe(`Job ${id} version 0 marked not stable`);
    expect((await client.jobVersions(id))!.Versions.find((v) => v.Version === 0)!.Stable).toBe(false);
  });

  it("shows the service's error when it refuses (a version that does not exist)", async () => {
    const id = freshId('hist-missing');
    await registered(serviceJob(id));
    const r = await converge(['stable', id, '99']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(
      /^Error: scheduler: POST \/v1\/job\/[^ ]+\/stable → 500 .*version 99 not found/m,
    );
  });

  it('a missing job: clear error', async () => {
    const r = await converge(['history', 'no-such-job', '--namespace', 'team-a']);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe('Error: no job no-such-job in namespace team-a');
  });

  it('--diffs shows what each version changed, edited fields as old => new', async () => {
    const id = freshId('diffs');
    const v0 = await registered(serviceJob(id));
    await registered(edited(v0, 'nginx:1.26'));
    const r = await converge(['history', id, '--diffs']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const [newest, oldest] = r.stdout.split('\n\n');
    expect(newest).toMatch(/^Version +1$/m);
    expect(newest).toContain(`~ Job: "${id}"`);
    expect(newest).toContain('~ Task Group: "api"');
    expect(newest).toContain('~ Task: "server"');
    expect(newest).toMatch(/~ image: +"nginx:1\.25" => "nginx:1\.26"/);
    expect(oldest).toMatch(/^Version +0$/m);
    expect(oldest).not.toContain('Diff');
  });

  it('colours the diff on request (FORCE_COLOR) and never with NO_COLOR', async () => {
    const id = freshId('colour');
    const v0 = await registered(serviceJob(id));
    await registered(edited(v0, 'nginx:1.26'));
    const ansi = /\u001b\[/;
    const coloured = await converge(['history', id, '--diffs'], { NO_COLOR: '', FORCE_COLOR: '1' });
    expect(coloured.stdout).toMatch(ansi);
    const plain = await converge(['history', id, '--diffs'], { NO_COLOR: '1', FORCE_COLOR: '1' });
    expect(plain.code).toBe(0);
    expect(plain.stdout).not.toMatch(ansi);
    expect(plain.stdout).toContain('~ image');
  });
});

describe('job allocs, evals, deployments', () => {
  it('tables of allocations and evaluations, newest first', async () => {
    const id = freshId('tables');
    const v0 = await registered(serviceJob(id));
    await registered(edited(v0, 'nginx:1.26'));

    const allocs = await converge(['allocs', id]);
    expect(allocs.code).toBe(0);
    const rows = allocs.stdout.trim().split('\n');
    expect(rows[0]).toMatch(/^ID +GROUP +NODE +DESIRED +STATUS +VERSION +CREATED$/);
    expect(rows.slice(1).every((r) => /^[0-9a-f]{8} {2}api /.test(r))).toBe(true);
    const live = await client.jobAllocations(id);
    expect(rows).toHaveLength(live.length + 1);

    const evals = await converge(['evals', id]);
    expect(evals.code).toBe(0);
    const evalRows = evals.stdout.trim().split('\n');
    expect(evalRows[0]).toMatch(/^ID +PRIORITY +TRIGGERED BY +STATUS +PLACEMENT FAILURES$/);
    expect(evalRows.slice(1)).toHaveLength(2);
    expect(evalRows[1]).toMatch(/^[0-9a-f]{8} +50 +job-register +complete +none$/);
  });

  it('a missing job: clear error for each', async () => {
    for (const sub of ['allocs', 'evals', 'deployments']) {
      const r = await converge([sub, 'no-such-job']);
      expect(r.code).toBe(1);
      expect(r.stderr.trim()).toBe('Error: no job no-such-job in namespace default');
    }
    // The writes the service answers with a 500 for a missing job say it the same way.
    for (const args of [
      ['dispatch', 'no-such-job'],
      ['evaluate', 'no-such-job'],
      ['force-periodic', 'no-such-job'],
      ['revert', 'no-such-job', '0'],
    ]) {
      const r = await converge(args);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr, args.join(' ')).toMatch(
        /^Error: no job no-such-job in namespace default \(the service answered 500: /,
      );
      expect(r.stderr, args.join(' ')).not.toContain('may have taken effect');
    }
  });

  it('deployments: a table with the job version and status', async () => {
    const id = freshId('deploys');
    const v0 = await registered(serviceJob(id));
    await registered(edited(v0, 'nginx:1.26'));
    const r = await converge(['deployments', id]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const rows = r.stdout.trim().split('\n');
    expect(rows[0]).toMatch(/^ID +JOB VERSION +STATUS +DESCRIPTION$/);
    expect(rows.length).toBeGreaterThan(1);
    const json = JSON.parse((await converge(['deployments', id, '--json'])).stdout) as { JobID: string }[];
    expect(json.every((d) => d.JobID === id)).toBe(true);
  });
});

describe('job plan', () => {
  it('a new job from a bare JSON job: the diff, the dry run, the index; --detailed-exitcode says changes', async () => {
    const id = freshId('plan-new');
    const dir = manifestDir({ 'job.json': JSON.stringify(serviceJob(id)) });
    const r = await run(['job', 'plan', `${dir}/job.json`, '--detailed-exitcode'], {
      ...sandbox.env(),
      NO_COLOR: '1',
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(2);
    expect(r.stdout).toContain(`+ Job: "${id}"`);
    expect(r.stdout).toContain('Scheduler dry-run:');
    expect(r.stdout).toContain('- api: 2 create');
    expect(r.stdout).toMatch(/^Job Modify Index: 0$/m);
    expect(await client.readJob(id)).toBeUndefined();

    const plain = await run(['job', 'plan', `${dir}/job.json`], { ...sandbox.env(), NO_COLOR: '1' });
    expect(plain.code).toBe(0);
  });

  it('an edited job from {"Job": …}: edited fields, per-group updates, the current index; unchanged: exit 0', async () => {
    const id = freshId('plan-edit');
    const v0 = await registered(serviceJob(id));
    const index = (await client.readJob(id))!.JobModifyIndex;
    const dir = manifestDir({
      'edit.json': JSON.stringify({ Job: edited(v0, 'nginx:1.26') }),
      'same.json': JSON.stringify({ Job: v0 }),
    });
    const env = { ...sandbox.env(), NO_COLOR: '1' };
    const r = await run(['job', 'plan', `${dir}/edit.json`, '--detailed-exitcode'], env);
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/~ image: +"nginx:1\.25" => "nginx:1\.26"/);
    expect(r.stdout).toMatch(/^- api: .*update/m);
    expect(r.stdout).toContain(`Job Modify Index: ${index}`);

    const same = await run(['job', 'plan', `${dir}/same.json`, '--detailed-exitcode'], env);
    expect(same.code).toBe(0);
    const json = JSON.parse((await run(['job', 'plan', `${dir}/same.json`, '--json'], env)).stdout) as {
      JobModifyIndex: number;
    };
    expect(json.JobModifyIndex).toBe(index);
  });

  it('a text job spec is parsed by the service first', async () => {
    const id = freshId('plan-hcl');
    const hcl = `job "${id}" {\n  datacenters = ["dc1"]\n  group "api" {\n    count = 1\n    task "server" {\n      driver = "docker"\n      config { image = "nginx:1.25" }\n    }\n  }\n}\n`;
    const dir = manifestDir({ 'job.hcl': hcl });
    const r = await run(['job', 'plan', `${dir}/job.hcl`], { ...sandbox.env(), NO_COLOR: '1' });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`+ Job: "${id}"`);
  });

  it('warns about placements that would fail, and names the next launch of a periodic job', async () => {
    const big = serviceJob(freshId('plan-big'));
    (big.TaskGroups![0]!.Tasks![0]!.Resources as { MemoryMB: number }).MemoryMB = 10_000_000;
    const cron = batchJob(freshId('plan-cron'), {
      Periodic: { Enabled: true, Spec: '0 3 * * *', SpecType: 'cron' },
    });
    const dir = manifestDir({ 'big.json': JSON.stringify(big), 'cron.json': JSON.stringify({ Job: cron }) });
    const env = { ...sandbox.env(), NO_COLOR: '1' };
    const r = await run(['job', 'plan', `${dir}/big.json`], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('- WARNING: Failed to place all allocations.');
    expect(r.stdout).toContain('  Task Group "api" (failed to place 2 allocations):');
    expect(r.stdout).toMatch(/^ {4}\* Dimension "memory" exhausted on \d+ nodes?$/m);

    const periodic = await run(['job', 'plan', `${dir}/cron.json`], env);
    expect(periodic.code).toBe(0);
    expect(periodic.stdout).toMatch(
      /^- If submitted now, the next periodic launch would be at \d{4}-\d\d-\d\dT03:00:00Z\.$/m,
    );
  });

  it("a text spec the service cannot parse: the parser's message, naming the file", async () => {
    const dir = manifestDir({ 'bad.hcl': 'job "x" {\n  group "g" {\n' });
    const r = await run(['job', 'plan', `${dir}/bad.hcl`], { ...sandbox.env(), NO_COLOR: '1' });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(
      /^Error: Failed to parse job: .*bad\.hcl:\d+,\d+-\d+(,\d+)?: Unclosed configuration block/m,
    );
    expect(r.stderr).not.toContain('input.hcl');
  });

  it('a JSON file without a job: refused before any request', async () => {
    const dir = manifestDir({ 'nothing.json': '{"Name": "no id"}' });
    const r = await run(['job', 'plan', `${dir}/nothing.json`], { ...sandbox.env(), NO_COLOR: '1' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('holds no job');
  });
});

describe('job dispatch', () => {
  it('refuses a payload over 16384 bytes before sending, naming its size', async () => {
    const dir = manifestDir({ 'big.bin': 'x'.repeat(16385) });
    const r = await converge(['dispatch', 'any-job', '--payload-file', `${dir}/big.bin`]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(
      `Error: payload file ${dir}/big.bin is 16385 bytes; the scheduler accepts at most 16384 bytes for a dispatch`,
    );
    const stdin = await converge(['dispatch', 'any-job', '--payload-file', '-'], {}, 'y'.repeat(20000));
    expect(stdin.stderr).toContain('the payload on standard input is 20000 bytes');
  });

  it('refuses --meta without key=value', async () => {
    const r = await converge(['dispatch', 'any-job', '--meta', 'novalue']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('--meta wants key=value');
  });

  it('dispatches a parameterized job with a payload and meta: prints the child and the evaluation', async () => {
    const id = freshId('param');
    await registered(
      batchJob(id, { ParameterizedJob: { Payload: 'optional', MetaOptional: ['owner', 'ticket'] } }),
    );
    const dir = manifestDir({ 'payload.txt': 'hello' });
    const r = await converge([
      'dispatch',
      id,
      '--payload-file',
      `${dir}/payload.txt`,
      '--meta',
      'owner=ops',
      '--meta',
      'ticket=a=b',
    ]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const m = /^Job (\S+) dispatched: (\S+) \(evaluation ([0-9a-f]{8})\)$/m.exec(r.stdout.trim());
    expect(m?.[1]).toBe(id);
    const child = await client.readJob(m![2]!);
    expect(child?.ParentID).toBe(id);
    expect(child?.Meta).toMatchObject({ owner: 'ops', ticket: 'a=b' });
    expect(Buffer.from(String(child?.Payload), 'base64').toString()).toBe('hello');

    // The child's ID has a `/`: the CLI reaches it all the same, and the parent counts it.
    const childStatus = await converge(['status', m![2]!]);
    expect(childStatus.code).toBe(0);
    expect(childStatus.stdout).toMatch(new RegExp(`^Parent +${id}$`, 'm'));
    expect(childStatus.stdout).not.toContain('Parameterized');
    expect((await converge(['status', id])).stdout).toMatch(/^Parameterized +yes$/m);
    const parentStatus = await converge(['status', id]);
    expect(parentStatus.stdout).toMatch(/^Children: \d+ pending, \d+ running, \d+ dead$/m);
  });

  it('stops a parameterized job, which starts no evaluation, saying so rather than "(evaluation )"', async () => {
    const id = freshId('param-stop');
    await registered(batchJob(id, { ParameterizedJob: { Payload: 'optional' } }));
    const r = await converge(['stop', id, '--yes']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(`Job ${id} stopped (no evaluation needed)`);
  });
});

describe('job revert, evaluate, force-periodic', () => {
  it('reverts to an earlier version (a new version with its spec); refuses a wrong prior version', async () => {
    const id = freshId('revert');
    const v0 = await registered(serviceJob(id));
    await registered(edited(v0, 'nginx:1.26'));
    const refused = await converge(['revert', id, '0', '--enforce-prior-version', '5']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^Error: scheduler: POST .*\/revert → /m);

    const r = await converge(['revert', id, '0']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toMatch(
      new RegExp(`^Job ${id} reverted to version 0, as version 2 \\(evaluation [0-9a-f]{8}\\)$`),
    );
    const job = (await client.readJob(id))!;
    expect(job.Version).toBe(2);
    const task = job.TaskGroups![0]!.Tasks![0]! as { Config: { image: string } };
    expect(task.Config.image).toBe('nginx:1.25');
  });

  it('evaluate creates an evaluation', async () => {
    const id = freshId('eval');
    await registered(serviceJob(id));
    const before = (await client.jobEvaluations(id)).length;
    const r = await converge(['evaluate', id, '--force-reschedule']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toMatch(new RegExp(`^Job ${id} evaluated: evaluation [0-9a-f]{8}`));
    expect((await client.jobEvaluations(id)).length).toBe(before + 1);
  });

  it('force-periodic launches a periodic job now', async () => {
    const id = freshId('cron');
    await registered(batchJob(id, { Periodic: { Enabled: true, Spec: '0 3 * * *', SpecType: 'cron' } }));
    const r = await converge(['force-periodic', id]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toMatch(
      new RegExp(
        `^Job ${id} launched now: ${id}/periodic-\\d+ \\(evaluation [0-9a-f]{8}\\)\nNext: \`converge job status ${id}/periodic-\\d+\` follows it\\.$`,
      ),
    );
    const children = await client.listJobs({ prefix: `${id}/` });
    expect(children.length).toBe(1);
  });
});

describe('job scale', () => {
  it('wants --message or --error before sending anything', async () => {
    const id = freshId('scale-nomsg');
    await registered(serviceJob(id));
    const r = await converge(['scale', id, 'api', '4']);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(
      'Error: a scaling event needs its reason: --message TEXT (recorded with the event), or --error TEXT to record a failed scaling',
    );
    expect((await client.readJob(id))!.TaskGroups![0]!.Count).toBe(2);
  });

  it('names the groups when the group does not exist, and the namespace when the job does not', async () => {
    const id = freshId('scale-group');
    await registered(serviceJob(id));
    const r = await converge(['scale', id, 'db', '4', '--message', 'more']);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(`Error: job ${id} has no task group db (groups: api)`);
    const missing = await converge(['scale', 'no-such-job', 'api', '1', '--message', 'x']);
    expect(missing.stderr.trim()).toBe('Error: no job no-such-job in namespace default');
    const bad = await converge(['scale', id, 'api', 'four', '--message', 'x']);
    expect(bad.stderr.trim()).toBe('Error: COUNT must be a whole number ≥ 0, not "four"');
  });

  it("shows the service's refusal while a deployment is active, with what to wait for, and leaves the count", async () => {
    const id = freshId('scale-deploying');
    const job = serviceJob(id);
    job.TaskGroups![0]!.Update = { MaxParallel: 1 };
    await registered(job);
    const r = await converge(['scale', id, 'api', '3', '--message', 'more']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim()).toBe(
      `Error: scheduler: POST /v1/job/${id}/scale → 400 job scaling blocked due to active deployment\n` +
        `a deployment of ${id} is running: wait until it finishes (\`converge job deployments ${id}\` shows it), then scale again`,
    );
    expect((await client.readJob(id))!.TaskGroups![0]!.Count).toBe(2);
  });

  it('--error records a failed scaling event with its text, count unchanged', async () => {
    const id = freshId('scale-error');
    await registered(serviceJob(id));
    const r = await converge(['scale', id, 'api', '--error', 'autoscaler could not reach metrics']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(
      `Job ${id}: scaling error recorded for group api, count unchanged at 2 (no evaluation needed)`,
    );
    const event = (await client.jobScaleStatus(id))!.TaskGroups.api!.Events?.[0];
    expect(event?.Message).toBe('autoscaler could not reach metrics');
    expect((await client.readJob(id))!.TaskGroups![0]!.Count).toBe(2);
  });

  it('without COUNT records a scaling event only', async () => {
    const id = freshId('scale-event');
    await registered(serviceJob(id));
    const r = await converge(['scale', id, 'api', '--message', 'checked capacity']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(
      `Job ${id}: scaling event recorded for group api, count unchanged at 2 (no evaluation needed)`,
    );
    const status = await client.jobScaleStatus(id);
    expect(status!.TaskGroups.api!.Events?.[0]?.Message).toBe('checked capacity');
  });

  it('scales a group: one line with the old and new count; the service has the new count', async () => {
    const id = freshId('scale');
    await registered(batchJob(id, {}));
    const r = await converge(['scale', id, 'run', '3', '--message', 'more workers']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toMatch(
      new RegExp(`^Job ${id} scaled: group run 1 → 3 \\((evaluation [0-9a-f]{8}|no evaluation needed)\\)$`),
    );
    expect((await client.readJob(id))!.TaskGroups![0]!.Count).toBe(3);
    const status = await client.jobScaleStatus(id);
    expect(status!.TaskGroups.run!.Events?.[0]?.Message).toBe('more workers');
  });
});

describe('job stop', () => {
  it('without --yes and without a terminal: refuses, says to pass --yes, stops nothing', async () => {
    const id = freshId('stop-refused');
    await registered(serviceJob(id));
    const r = await converge(['stop', id]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(
      `Error: refusing to stop job ${id} without confirmation: pass --yes (no terminal to ask on)`,
    );
    expect((await client.readJob(id))!.Stop).toBeFalsy();
  });

  it('--yes stops the job; --purge removes it', async () => {
    const id = freshId('stop');
    await registered(serviceJob(id));
    const r = await converge(['stop', id, '--yes']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toMatch(new RegExp(`^Job ${id} stopped \\(evaluation [0-9a-f]{8}\\)$`));
    expect((await client.readJob(id))!.Stop).toBe(true);
    const status = await converge(['status', id]);
    expect(status.stdout).toMatch(/^Status +\S+ \(stopped\)$/m);

    const purged = await converge(['stop', id, '--yes', '--purge', '--json']);
    expect(purged.code).toBe(0);
    expect(JSON.parse(purged.stdout)).toHaveProperty('EvalID');
    expect(await client.readJob(id)).toBeUndefined();
  });

  it('a missing job: clear error, even with --yes', async () => {
    const r = await converge(['stop', 'no-such-job', '--yes', '--namespace', 'team-a']);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe('Error: no job no-such-job in namespace team-a');
  });
});
