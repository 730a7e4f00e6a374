/**
 * The scheduler's parse endpoint over HTTP: HCL job specifications to the API's JSON job (a
 * realistic service job, a parameterized job, a periodic job), Canonicalize on and off, and the
 * errors: empty spec, syntax errors with their position, unsupported arguments and blocks,
 * expressions the sandbox does not evaluate. A parsed job registers as is.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { type Api, apiFor } from './helpers.js';
import { type Json, register } from './scheduler-helpers.js';

let sandbox: RunningSandbox;
let api: Api;

beforeAll(async () => {
  sandbox = await startSandbox({ config: { scheduler: {} } });
  api = apiFor(sandbox);
});

afterAll(async () => {
  await sandbox.close();
});

const SERVICE_JOB = `
job "web" {
  datacenters = ["dc1"]
  type        = "service"

  meta {
    owner = "team-a"
  }

  constraint {
    attribute = "\${attr.kernel.name}"
    value     = "linux"
  }

  update {
    max_parallel     = 1
    min_healthy_time = "10s"
    healthy_deadline = "3m"
    auto_revert      = true
  }

  group "frontend" {
    count = 2

    network {
      port "http" {
        to = 8080
      }
      port "metrics" {
        static = 9100
      }
    }

    restart {
      attempts = 3
      interval = "5m"
      delay    = "15s"
      mode     = "delay"
    }

    task "nginx" {
      driver = "docker"

      config {
        image = "nginx:1.27"
        ports = ["http"]
        args  = ["-g", "daemon off;"]
      }

      env {
        LOG_LEVEL = "info"
      }

      resources {
        cpu    = 250
        memory = 128
      }

      service {
        name = "web"
        port = "http"
        tags = ["public"]

        check {
          type     = "http"
          path     = "/health"
          interval = "10s"
          timeout  = "2s"
        }
      }

      template {
        data        = "upstream: {{ env \\"NOMAD_META_owner\\" }}"
        destination = "local/app.conf"
        change_mode = "restart"
      }

      kill_timeout = "20s"
    }
  }
}
`;

const PARAMETERIZED_JOB = `
job "report" {
  type = "batch"

  parameterized {
    payload       = "required"
    meta_required = ["customer"]
    meta_optional = ["format"]
  }

  group "run" {
    task "render" {
      driver = "exec"

      config {
        command = "/bin/render"
      }

      dispatch_payload {
        file = "input.json"
      }
    }
  }
}
`;

const PERIODIC_JOB = `
job "nightly" {
  type = "batch"

  periodic {
    cron             = "0 3 * * *"
    prohibit_overlap = true
    time_zone        = "Europe/Berlin"
  }

  group "backup" {
    task "dump" {
      driver = "exec"
      config {
        command = "/bin/dump"
      }
    }
  }
}
`;

async function parse(body: Json, status = 200) {
  const res = await api('POST', '/v1/jobs/parse', { body, token: null });
  expect(res.status, res.text).toBe(status);
  return res;
}

describe('parse', () => {
  it('maps a realistic service job to the API job (not canonicalized: unset fields are null)', async () => {
    const job = (await parse({ JobHCL: SERVICE_JOB })).json<Json>();
    expect(job).toMatchObject({
      ID: 'web',
      Name: 'web',
      Type: 'service',
      Datacenters: ['dc1'],
      Meta: { owner: 'team-a' },
      Constraints: [{ LTarget: '${attr.kernel.name}', RTarget: 'linux', Operand: '=' }],
      Update: { MaxParallel: 1, MinHealthyTime: 10e9, HealthyDeadline: 180e9, AutoRevert: true },
      Region: null,
      Namespace: null,
      Priority: null,
      Periodic: null,
      ParameterizedJob: null,
    });
    const group = (job.TaskGroups as Json[])[0]!;
    expect(group).toMatchObject({
      Name: 'frontend',
      Count: 2,
      RestartPolicy: { Attempts: 3, Interval: 300e9, Delay: 15e9, Mode: 'delay' },
      Networks: [
        {
          DynamicPorts: [{ Label: 'http', Value: 0, To: 8080, HostNetwork: '' }],
          ReservedPorts: [{ Label: 'metrics', Value: 9100, To: 0, HostNetwork: '' }],
        },
      ],
      EphemeralDisk: null,
    });
    const task = (group.Tasks as Json[])[0]!;
    expect(task).toMatchObject({
      Name: 'nginx',
      Driver: 'docker',
      Config: { image: 'nginx:1.27', ports: ['http'], args: ['-g', 'daemon off;'] },
      Env: { LOG_LEVEL: 'info' },
      Resources: { CPU: 250, MemoryMB: 128 },
      KillTimeout: 20e9,
      Services: [
        {
          Name: 'web',
          PortLabel: 'http',
          Tags: ['public'],
          Checks: [{ Type: 'http', Path: '/health', Interval: 10e9, Timeout: 2e9 }],
        },
      ],
      Templates: [
        {
          EmbeddedTmpl: 'upstream: {{ env "NOMAD_META_owner" }}',
          DestPath: 'local/app.conf',
          ChangeMode: 'restart',
        },
      ],
      LogConfig: null,
    });
  });

  it('Canonicalize fills the defaults, and the result registers as is', async () => {
    const job = (await parse({ JobHCL: SERVICE_JOB, Canonicalize: true })).json<Json>();
    expect(job).toMatchObject({ Namespace: 'default', Region: 'global', Priority: 50, AllAtOnce: false });
    const task = ((job.TaskGroups as Json[])[0]!.Tasks as Json[])[0]!;
    expect(task.LogConfig).toEqual({ MaxFiles: 10, MaxFileSizeMB: 10 });
    expect((task.Resources as Json).CPU).toBe(250);
    const reply = await register(api, job);
    expect(reply.JobModifyIndex).toBeGreaterThan(0);
    const stored = await api('GET', '/v1/job/web');
    expect((stored.json<Json>().TaskGroups as Json[])[0]!.Count).toBe(2);
  });

  it('maps a parameterized job', async () => {
    const job = (await parse({ JobHCL: PARAMETERIZED_JOB })).json<Json>();
    expect(job).toMatchObject({
      ID: 'report',
      Type: 'batch',
      ParameterizedJob: { Payload: 'required', MetaRequired: ['customer'], MetaOptional: ['format'] },
    });
    const task = ((job.TaskGroups as Json[])[0]!.Tasks as Json[])[0]!;
    expect(task.DispatchPayload).toEqual({ File: 'input.json' });
    expect((job.TaskGroups as Json[])[0]!.Count).toBeNull();
    const canonical = (await parse({ JobHCL: PARAMETERIZED_JOB, Canonicalize: true })).json<Json>();
    expect((canonical.TaskGroups as Json[])[0]!.Count).toBe(1);
  });

  it('maps a periodic job: cron is Spec, SpecType cron', async () => {
    const job = (await parse({ JobHCL: PERIODIC_JOB })).json<Json>();
    expect(job.Periodic).toEqual({
      Spec: '0 3 * * *',
      ProhibitOverlap: true,
      TimeZone: 'Europe/Berlin',
      SpecType: 'cron',
    });
  });

  it('HCLv1 is ignored (the real agent no longer has it): the text is read as HCL 2', async () => {
    const job = (await parse({ JobHCL: PERIODIC_JOB, HCLv1: true })).json<Json>();
    expect(job.ID).toBe('nightly');
  });

  it('an empty spec is 400 "Job spec is empty"', async () => {
    const res = await parse({ JobHCL: '' }, 400);
    expect(res.text).toBe('Job spec is empty');
    expect((await parse({}, 400)).text).toBe('Job spec is empty');
  });

  it('a syntax error is 400 "Failed to parse job:" with the file position', async () => {
    const res = await parse({ JobHCL: 'job "x" {\n  type = \n}\n' }, 400);
    expect(res.headers.get('content-type')).toContain('text/plain');
    expect(res.text).toBe(
      'Failed to parse job: input.hcl:2,10-3,1: Invalid expression; Expected the start of an expression, but found an invalid expression token.',
    );
  });

  it('an unsupported argument or block is 400 with its position', async () => {
    const arg = await parse(
      { JobHCL: 'job "x" {\n  group "g" {\n    count = 1\n    colour = "red"\n  }\n}\n' },
      400,
    );
    expect(arg.text).toBe(
      'Failed to parse job: input.hcl:4,5-11: Unsupported argument; An argument named "colour" is not expected here.',
    );
    const block = await parse({ JobHCL: 'job "x" {\n  sidecar {\n    a = 1\n  }\n}\n' }, 400);
    expect(block.text).toBe(
      'Failed to parse job: input.hcl:2,3-10: Unsupported block type; Blocks of type "sidecar" are not expected here.',
    );
  });

  it('a number given an expression is refused: the sandbox does not evaluate expressions', async () => {
    const res = await parse({ JobHCL: 'job "x" {\n  priority = 40 + 10\n}\n' }, 400);
    expect(res.text).toBe(
      'Failed to parse job: input.hcl:2,3-11: Unsupported expression; The sandbox does not evaluate HCL expressions: priority = "${40 + 10}".',
    );
  });

  it('needs no token, and answers 405 to GET', async () => {
    await parse({ JobHCL: PERIODIC_JOB });
    const get = await api('GET', '/v1/jobs/parse');
    expect([get.status, get.text]).toEqual([405, 'Invalid method']);
  });
});
