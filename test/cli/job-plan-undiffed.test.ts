/**
 * Job changes the scheduler's own plan diff does not itemise, against the sandbox over HTTP: a
 * job-level `Spreads` change (its diff says `None`) is planned and applied, and the next plan is
 * empty; parts its diff marks edited with nothing inside show the attribute that changed, in the
 * manifest's units (never `TaskGroups["web"] = null -> null`); sets (constraints, networks,
 * artifacts, tags) read in the manifest's names with only the changed fields; templates are matched
 * by DestPath.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

let sandbox: RunningSandbox;
let env: Record<string, string | undefined>;

type Job = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function base(): Job {
  return {
    Type: 'service',
    Datacenters: ['dc1'],
    Update: { Stagger: '15s', MaxParallel: 1 },
    Constraints: [{ LTarget: '$${attr.kernel.name}', RTarget: 'linux', Operand: '=' }],
    TaskGroups: [
      {
        Name: 'web',
        Count: 1,
        StopAfterClientDisconnect: '30s',
        Networks: [{ Mode: 'bridge', DynamicPorts: [{ Label: 'http', To: 8080 }] }],
        Services: [
          {
            Name: 'web',
            PortLabel: 'http',
            Tags: ['b', 'a'],
            Checks: [
              { Name: 'a', Type: 'http', Path: '/a', Interval: '10s', Timeout: '2s' },
              { Name: 'b', Type: 'http', Path: '/b', Interval: '10s', Timeout: '2s' },
            ],
          },
        ],
        Tasks: [
          {
            Name: 'server',
            Driver: 'docker',
            Config: { image: 'nginx:1.27' },
            RestartPolicy: { Attempts: 5 },
            Lifecycle: { Hook: 'prestart', Sidecar: false },
            Artifacts: [
              {
                GetterSource: 'https://x/a.tgz',
                GetterOptions: { checksum: 'md5:1' },
                RelativeDest: 'local/a',
              },
            ],
            Templates: [
              { DestPath: 'local/a', EmbeddedTmpl: 'A' },
              { DestPath: 'local/b', EmbeddedTmpl: 'B' },
            ],
          },
        ],
      },
    ],
  };
}

function parameterized(metaRequired: string[]): Job {
  return {
    Type: 'batch',
    Datacenters: ['dc1'],
    ParameterizedJob: { MetaRequired: metaRequired },
    TaskGroups: [{ Name: 'run', Tasks: [{ Name: 'once', Driver: 'exec', Config: { command: 'true' } }] }],
  };
}

function folder(jobs: Record<string, Job>): string {
  const dir = tempDir('converge-job-undiffed-');
  const docs = Object.entries(jobs).map(
    ([name, job]) =>
      `apiVersion: converge/v1\nkind: Job\nmetadata: { name: ${name} }\nspec: ${JSON.stringify(job)}\n`,
  );
  writeFileSync(path.join(dir, 'jobs.yaml'), docs.join('---\n'));
  return dir;
}

/** The manifest with the service job edited (the parameterized one as applied). */
const edited = (edit: (job: Job) => void): string => {
  const job = base();
  edit(job);
  return folder({ 'web-u': job, 'param-u': parameterized(['a', 'b']) });
};

async function plan(dir: string): Promise<string> {
  const r = await runCli(['plan', '-f', dir], env);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return r.stdout;
}

/** The lines of the job's diff, between its header and the plan's summary. */
function body(out: string): string {
  const lines = out.split('\n');
  const start = lines.findIndex((l) => l.includes('~ Job/default/'));
  const end = lines.findIndex((l) => l.startsWith('Plan:'));
  return lines
    .slice(start + 1, end)
    .filter((l) => !/^\s*# (group |no allocations)/.test(l) && l.trim() !== '')
    .join('\n');
}

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, token: 'job-undiffed-root-token' });
  env = { ...sandbox.env(), NO_COLOR: '1', CONVERGE_STATE_DIR: tempDir('converge-job-undiffed-state-') };
  const r = await runCli(
    ['apply', '-f', folder({ 'web-u': base(), 'param-u': parameterized(['a', 'b']) }), '--auto-approve'],
    env,
  );
  expect(r.code).toBe(0);
});
afterAll(async () => sandbox?.close());

describe('changes the scheduler diff leaves out', () => {
  it('plans a job-level Spreads change (diff None), applies it, then plans no change', async () => {
    const spread = (job: Job) => (job.Spreads = [{ Attribute: '$${node.datacenter}', Weight: 50 }]);
    const out = await plan(edited(spread));
    expect(body(out)).toBe(
      [
        '      + Spreads[0] {',
        '          + Attribute = "${node.datacenter}"',
        '          + Weight    = 50',
        '        }',
      ].join('\n'),
    );
    expect(out).toContain('Plan: 0 to add, 1 to change');
    const applied = await runCli(['apply', '-f', edited(spread), '--auto-approve'], env);
    expect(applied.code).toBe(0);
    expect(await plan(edited(spread))).toContain('No changes.');
    // Taken out again: a job's spreads have no default, so none written means none.
    expect(body(await plan(edited(() => {})))).toBe(
      '      - Spreads = [{ Attribute = "${node.datacenter}", Weight = 50 }]',
    );
    expect((await runCli(['apply', '-f', edited(() => {}), '--auto-approve'], env)).code).toBe(0);
    expect(await plan(edited(() => {}))).toContain('No changes.');
  });

  it("shows a job's Update.Stagger change in the manifest's units, not the groups it reaches", async () => {
    const stagger = (job: Job) => (job.Update.Stagger = '20s');
    expect(body(await plan(edited(stagger)))).toBe(
      ['      ~ Update = {', '          ~ Stagger = "15s" -> "20s"', '        }'].join('\n'),
    );
    expect((await runCli(['apply', '-f', edited(stagger), '--auto-approve'], env)).code).toBe(0);
    expect(await plan(edited(stagger))).toContain('No changes.');
    expect((await runCli(['apply', '-f', edited(() => {}), '--auto-approve'], env)).code).toBe(0);
  });
});

describe('parts the diff marks edited with nothing inside', () => {
  const cases: [string, (job: Job) => void, string[]][] = [
    [
      'service tags reordered',
      (j) => (j.TaskGroups[0].Services[0].Tags = ['a', 'b']),
      [
        '      ~ TaskGroups["web"] {',
        '          ~ Services["web"] {',
        '              ~ Tags = ["b", "a"] -> ["a", "b"]',
        '            }',
        '        }',
      ],
    ],
    [
      'a task lifecycle sidecar',
      (j) => (j.TaskGroups[0].Tasks[0].Lifecycle.Sidecar = true),
      [
        '      ~ TaskGroups["web"] {',
        '          ~ Tasks["server"] {',
        '              ~ Lifecycle = {',
        '                  ~ Sidecar = false -> true',
        '                }',
        '            }',
        '        }',
      ],
    ],
    [
      "a task's restart attempts",
      (j) => (j.TaskGroups[0].Tasks[0].RestartPolicy.Attempts = 6),
      [
        '      ~ TaskGroups["web"] {',
        '          ~ Tasks["server"] {',
        '              ~ RestartPolicy = {',
        '                  ~ Attempts = 5 -> 6',
        '                }',
        '            }',
        '        }',
      ],
    ],
    [
      'group spreads added',
      (j) => (j.TaskGroups[0].Spreads = [{ Attribute: '$${node.datacenter}', Weight: 50 }]),
      [
        '      ~ TaskGroups["web"] {',
        '          + Spreads[0] {',
        '              + Attribute = "${node.datacenter}"',
        '              + Weight    = 50',
        '            }',
        '        }',
      ],
    ],
    [
      "a group's StopAfterClientDisconnect (now in the service's diff)",
      (j) => (j.TaskGroups[0].StopAfterClientDisconnect = '45s'),
      ['      ~ TaskGroups["web"] {', '          ~ StopAfterClientDisconnect = "30s" -> "45s"', '        }'],
    ],
  ];
  for (const [name, edit, lines] of cases)
    it(name, async () => {
      const out = await plan(edited(edit));
      expect(body(out)).toBe(lines.join('\n'));
      expect(out).not.toContain('null -> null');
    });

  it('a parameterized job whose MetaRequired is reordered', async () => {
    const out = await plan(folder({ 'web-u': base(), 'param-u': parameterized(['b', 'a']) }));
    expect(body(out)).toBe(
      '      ~ ParameterizedJob = {\n          ~ MetaRequired = ["a", "b"] -> ["b", "a"]\n        }',
    );
  });
});

describe("sets in the manifest's names, only the changed fields", () => {
  const cases: [string, (job: Job) => void, string[]][] = [
    [
      "a constraint's RTarget",
      (j) => (j.Constraints[0].RTarget = 'windows'),
      ['      ~ Constraints[0] {', '          ~ RTarget = "linux" -> "windows"', '        }'],
    ],
    [
      "a dynamic port's To",
      (j) => (j.TaskGroups[0].Networks[0].DynamicPorts[0].To = 8081),
      [
        '      ~ TaskGroups["web"] {',
        '          ~ Networks[0] {',
        '              ~ DynamicPorts["http"] {',
        '                  ~ To = 8080 -> 8081',
        '                }',
        '            }',
        '        }',
      ],
    ],
    [
      "an artifact's GetterOptions",
      (j) => (j.TaskGroups[0].Tasks[0].Artifacts[0].GetterOptions = { checksum: 'md5:2' }),
      [
        '      ~ TaskGroups["web"] {',
        '          ~ Tasks["server"] {',
        '              ~ Artifacts["local/a"] {',
        '                  ~ GetterOptions = {',
        '                      ~ checksum = "md5:1" -> "md5:2" # forces create/destroy update',
        '                    }',
        '                }',
        '            }',
        '        }',
      ],
    ],
    [
      "the second of two checks' Interval",
      (j) => (j.TaskGroups[0].Services[0].Checks[1].Interval = '20s'),
      [
        '      ~ TaskGroups["web"] {',
        '          ~ Services["web"] {',
        '              ~ Checks["b"] {',
        '                  ~ Interval = "10s" -> "20s"',
        '                }',
        '            }',
        '        }',
      ],
    ],
    [
      'a tag added',
      (j) => j.TaskGroups[0].Services[0].Tags.push('c'),
      [
        '      ~ TaskGroups["web"] {',
        '          ~ Services["web"] {',
        '              ~ Tags = [',
        '                  + "c",',
        '                ]',
        '            }',
        '        }',
      ],
    ],
  ];
  for (const [name, edit, lines] of cases)
    it(name, async () => {
      expect(body(await plan(edited(edit)))).toBe(lines.join('\n'));
    });
});

describe('templates, matched by DestPath', () => {
  it('an edit is headed by the template it edits, whatever the order', async () => {
    const out = await plan(
      edited((j) => {
        j.TaskGroups[0].Tasks[0].Templates = [
          { DestPath: 'local/b', EmbeddedTmpl: 'B2' },
          { DestPath: 'local/a', EmbeddedTmpl: 'A' },
        ];
      }),
    );
    expect(body(out)).toContain('~ Templates["local/b"] {');
    expect(body(out)).toContain('~ EmbeddedTmpl = "B" -> "B2"');
    expect(body(out)).not.toContain('DestPath');
  });

  it('a reorder alone says so, not each DestPath rewritten', async () => {
    const out = await plan(edited((j) => j.TaskGroups[0].Tasks[0].Templates.reverse()));
    expect(body(out)).toBe(
      [
        '      ~ TaskGroups["web"] {',
        '          ~ Tasks["server"] {',
        '              ~ Templates # reordered: local/a, local/b -> local/b, local/a',
        '            }',
        '        }',
      ].join('\n'),
    );
  });
});
