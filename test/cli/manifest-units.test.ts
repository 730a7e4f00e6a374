/**
 * Plans in the manifest's own units and forms, as a user reads them against the sandbox: a duration
 * written `1h` changes as `"1h" -> "2h"`, job durations read `1m` and `24h` (never nanoseconds), a
 * job created from a text spec shows what the file wrote (not the parser's empty defaults), and a job
 * deleted shows what identifies it.
 *
 * The lines are matched one by one, not as a whole plan: how nested values are laid out is the
 * renderers' business; the values inside them are the kinds'.
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

let sandbox: RunningSandbox;

beforeAll(async () => {
  sandbox = await startSandbox({
    port: 0,
    token: `root-${randomUUID()}`,
    config: { secrets: { mounts: [{ path: 'units' }] } },
  });
});
afterAll(async () => sandbox?.close());

function folder(files: Record<string, string>): string {
  const dir = tempDir('converge-units-');
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  return dir;
}

async function converge(args: string[]) {
  const stateDir = tempDir('converge-units-state-');
  return runCli(args, { ...sandbox.env(), NO_COLOR: '1', CONVERGE_STATE_DIR: stateDir });
}

async function plan(dir: string): Promise<string> {
  const r = await converge(['plan', '-f', dir]);
  expect(r.code, r.stderr).toBe(0);
  return r.stdout;
}

function jobHcl(id: string, healthyDeadline: string, count = '    count = 2\n'): string {
  return `job "${id}" {
  datacenters = ["dc1"]
  type        = "service"

  update {
    healthy_deadline = "${healthyDeadline}"
  }

  group "web" {
${count}
    restart {
      interval = "24h"
      delay    = "15s"
    }

    task "server" {
      driver = "docker"
      config {
        image = "nginx:1.27"
      }
      resources {
        cpu    = 100
        memory = 128
      }
    }
  }
}
`;
}

function manifest(id: string, ttl: string, ensure = ''): string {
  return `apiVersion: converge/v1
kind: Job
metadata: { name: ${id}${ensure} }
spec: { specFile: job.hcl }
---
apiVersion: converge/v1
kind: LdapConfig
metadata: { name: units }
spec:
  url: ldap://127.0.0.1:1
  userdn: ou=people,dc=example,dc=test
  token_ttl: ${ttl}
`;
}

describe('values in the manifest’s own units and forms', () => {
  const id = `units-${randomUUID().slice(0, 8)}`;
  const dir = folder({ 'job.hcl': jobHcl(id, '1m'), 'units.yaml': manifest(id, '1h') });

  it('creates a job from a text spec showing what the file wrote, durations as durations', async () => {
    const out = await plan(dir);
    expect(out).toMatch(/\+ Type\s+= "service"/);
    expect(out).toContain('HealthyDeadline = "1m"');
    expect(out).toContain('Interval = "24h"');
    expect(out).toContain('Delay = "15s"');
    expect(out).toContain('image = "nginx:1.27"');
    expect(out).toMatch(/\+ token_ttl\s+= "1h"/);
    // The parser's empty defaults, its copy of the ID as Name, and nanoseconds are not shown.
    for (const noise of ['User = ""', 'Leader = false', 'ShutdownDelay', 'KillSignal', 'Kind = ""'])
      expect(out).not.toContain(noise);
    // At the job's own depth: a group's or task's Name inside its block is what the file wrote.
    expect(out).not.toMatch(/^ {6}\+ Name\s+=/m);
    expect(out).not.toMatch(/Dispatched|60000000000|86400000000000/);
  });

  it('changes durations in the form the manifest wrote them', async () => {
    const applied = await converge(['apply', '-f', dir, '--auto-approve']);
    expect(applied.code, `${applied.stdout}\n${applied.stderr}`).toBe(0);
    writeFileSync(path.join(dir, 'job.hcl'), jobHcl(id, '5m'));
    writeFileSync(path.join(dir, 'units.yaml'), manifest(id, '2h'));

    const out = await plan(dir);
    expect(out).toMatch(/~ token_ttl\s+= "1h" -> "2h"/);
    expect(out).toMatch(/~ (TaskGroups\[web\]\.Update\.)?HealthyDeadline\s+= "1m" -> "5m"/);
    expect(out).not.toMatch(/3600|7200|60000000000|300000000000/);

    // A duration left out goes back to 0, the service's "system default", and says so: "0s" alone
    // read as tokens that expire at once.
    writeFileSync(path.join(dir, 'units.yaml'), manifest(id, '1h').replace('  token_ttl: 1h\n', ''));
    const dropped = await plan(dir);
    expect(dropped).toMatch(
      /~ token_ttl\s+= "1h" -> "0s" # left out of the manifest: 0, the secrets service's system default/,
    );
  });

  it('deletes a job showing its identity, type, datacenters, groups and what runs, not every default', async () => {
    writeFileSync(path.join(dir, 'units.yaml'), manifest(id, '2h', ', ensure: absent'));
    const out = await plan(dir);
    // The job's block: from its address to the blank line that ends it.
    const start = out.indexOf(`- Job/default/${id}`);
    const deleted = out.slice(start, out.indexOf('\n\n', start));
    expect(deleted).toMatch(/- ID\s+= "units-/);
    expect(deleted).toMatch(/- Type\s+= "service"/);
    expect(deleted).toMatch(/- Datacenters\s+= \["dc1"\]/);
    expect(deleted).toMatch(/- TaskGroups\["web"\] \{\n\s+- Name\s+= "web"/);
    expect(deleted).toContain('Count = 2');
    // What stops running: each task's driver and image, not its resources or restart settings.
    expect(deleted).toMatch(
      /- Tasks\["server"\] \{\n\s+- Name\s+= "server"\n\s+- Driver = "docker"\n\s+- Config = \{ image = "nginx:1\.27" \}/,
    );
    for (const noise of ['Priority', 'RestartPolicy', 'Resources', 'Status', 'Meta', 'Update', 'LogConfig'])
      expect(deleted).not.toContain(noise);
  });
});

describe('what the service adds to a job to create', () => {
  it('is told where it matters: a group without a count runs the default', async () => {
    const id = `units-${randomUUID().slice(0, 8)}`;
    const dir = folder({
      'job.hcl': jobHcl(id, '1m', ''),
      'job.yaml': `apiVersion: converge/v1
kind: Job
metadata: { name: ${id} }
spec: { specFile: job.hcl }
`,
    });
    const out = await plan(dir);
    expect(out).toContain('# group web: Count not set: the scheduler runs 1 (its default)');
    expect(out).toContain('# group web: 1 to place');
  });
});

describe('durations in an inline job', () => {
  const job = (killTimeout: string) =>
    `apiVersion: converge/v1\nkind: Job\nmetadata: { name: inline-units }\nspec:\n  Type: service\n  Datacenters: [dc1]\n  TaskGroups:\n    - Name: g\n      Tasks:\n        - Name: t\n          Driver: docker\n          KillTimeout: ${killTimeout}\n          Config: { image: x, Timeout: 5s }\n`;

  it('may be written as a job file writes them, and are sent in the nanoseconds the service takes', async () => {
    const dir = folder({ 'job.yaml': job('20s') });
    const created = await plan(dir);
    expect(created).toMatch(/KillTimeout += "20s"/);
    const applied = await converge(['apply', '-f', dir, '--auto-approve']);
    expect(applied.code, applied.stderr).toBe(0);
    const read = await fetch(`${sandbox.env().CONVERGE_SCHEDULER_ADDR}/v1/job/inline-units`, {
      headers: { 'X-Nomad-Token': sandbox.env().CONVERGE_SCHEDULER_TOKEN! },
    });
    const live = (await read.json()) as {
      TaskGroups: { Tasks: { KillTimeout: unknown; Config: unknown }[] }[];
    };
    expect(live.TaskGroups[0]!.Tasks[0]!.KillTimeout).toBe(20_000_000_000);
    // A driver's own config keeps its own forms (`Timeout` there is no duration of the scheduler's).
    expect(live.TaskGroups[0]!.Tasks[0]!.Config).toMatchObject({ Timeout: '5s' });
    // Either form of the same duration plans no change.
    expect(await plan(dir)).toContain('No changes.');
    expect(await plan(folder({ 'job.yaml': job('20000000000') }))).toContain('No changes.');
    const longer = await plan(folder({ 'job.yaml': job('1m30s') }));
    expect(longer).toMatch(/KillTimeout += "20s" -> "1m30s"/);
  });

  it('are shown in the units the manifest wrote: nanoseconds as nanoseconds, "1m30s" as written', async () => {
    // The live job (from the test above) has 20s; a reviewer compares the plan with the manifest.
    const inNanoseconds = await plan(folder({ 'job.yaml': job('30000000000') }));
    expect(inNanoseconds).toMatch(/KillTimeout += 20000000000 -> 30000000000/);
    const created = await plan(
      folder({ 'job.yaml': job('30000000000').replace('name: inline-units', 'name: inline-units-new') }),
    );
    expect(created).toMatch(/\+ KillTimeout += 30000000000$/m);
    const asText = await plan(folder({ 'job.yaml': job('90s') }));
    expect(asText).toMatch(/KillTimeout += "20s" -> "90s"/);
  });

  it("of a job-level Update are shown in the manifest's units, though the service reports them per group", async () => {
    const updated = (minHealthy: string, deadline: string) =>
      `apiVersion: converge/v1\nkind: Job\nmetadata: { name: job-update-units }\nspec:\n  Type: service\n  Datacenters: [dc1]\n  Update: { MinHealthyTime: ${minHealthy}, HealthyDeadline: ${deadline} }\n  TaskGroups:\n    - Name: g\n      Tasks:\n        - Name: t\n          Driver: docker\n          Config: { image: x }\n`;
    const first = folder({ 'job.yaml': updated('30000000000', '1m30s') });
    expect((await converge(['apply', '-f', first, '--auto-approve'])).code).toBe(0);
    const changed = await plan(folder({ 'job.yaml': updated('45000000000', '5400s') }));
    expect(changed).toMatch(/MinHealthyTime += 30000000000 -> 45000000000/);
    expect(changed).toMatch(/HealthyDeadline += "1m30s" -> "5400s"/);
  });

  it('in any other text are refused by validate at their line', async () => {
    // The service refused such text only when the plan was made, and with it the whole apply.
    const refused = await converge(['validate', '-f', folder({ 'job.yaml': job('twenty') })]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /job\.yaml:12:\d+: spec\.TaskGroups\[0\]\.Tasks\[0\]\.KillTimeout .*nanoseconds, or a duration such as "20s"/,
    );
    expect(refused.stderr).not.toContain('Config');
  });

  it('as a bare number under a millisecond are refused, naming the units meant; as "5ns" they are taken', async () => {
    // `KillTimeout: 5` is 5 ns to the scheduler: a job file's writer meant seconds.
    const refused = await converge(['validate', '-f', folder({ 'job.yaml': job('5') })]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      'job.yaml:12:24: KillTimeout: 5 is 5 nanoseconds, as the scheduler reads a bare number: write "5s" for seconds (or "5ms"), or "5ns" if nanoseconds are meant',
    );
    // A driver's own config is not the scheduler's: its numbers are left alone.
    const config = job('5s').replace('image: x, Timeout: 5s', 'image: x, Timeout: 5');
    expect((await converge(['validate', '-f', folder({ 'job.yaml': config })])).code).toBe(0);
    // Said in the same run as a misspelt field beside it, not only once that is fixed.
    const withTypo = job('5').replace('Type: service', 'Type: service\n  Priorty: 50');
    const both = await converge(['validate', '-f', folder({ 'job.yaml': withTypo })]);
    expect(both.code).toBe(1);
    expect(both.stderr).toContain('unknown field "Priorty" in spec; did you mean "Priority"?');
    expect(both.stderr).toContain('KillTimeout: 5 is 5 nanoseconds');
    for (const meant of ['5ns', '1000000', '0']) {
      const r = await converge(['validate', '-f', folder({ 'job.yaml': job(meant) })]);
      expect(r.code, `${meant}: ${r.stderr}`).toBe(0);
    }
  });
});
