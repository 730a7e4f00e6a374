/**
 * Rendered plans as a reviewer reads them: a job created as nested blocks, a change deep inside a job
 * marked where it happens, a certificate changing one line as a line diff, and an object that could
 * not be planned named in the headline instead of "No changes", in the terminal and Markdown forms.
 */
import { describe, expect, it } from 'vitest';
import { renderHuman } from '../../src/planner/render/human.js';
import { planToJson } from '../../src/planner/render/json.js';
import { renderMarkdown } from '../../src/planner/render/markdown.js';
import { type Change, type Plan, summarise } from '../../src/planner/types.js';

function jobChange(partial: Partial<Change> & Pick<Change, 'action'>): Change {
  return {
    address: 'Job/default/cache',
    key: { kind: 'Job', name: 'cache', namespace: 'default' },
    diffs: [],
    after: null,
    before: null,
    dependsOn: [],
    ...partial,
  };
}

function planOf(changes: Change[], problems: Plan['problems'] = []): Plan {
  return { changes, summary: summarise(changes), problems, requests: {} };
}

const human = (plan: Plan) => renderHuman(plan, { color: false });

/** The Markdown's diff block alone (between its fences), as GitHub shows it. */
function diffBlock(md: string): string {
  const lines = md.split('\n');
  const open = lines.findIndex((l) => /^`{3,}diff$/.test(l));
  const close = lines.findIndex((l, i) => i > open && /^`{3,}$/.test(l));
  return lines.slice(open + 1, close).join('\n');
}

const create = planOf([
  jobChange({
    action: 'create',
    after: {
      ID: 'cache',
      Datacenters: ['dc1'],
      TaskGroups: [
        {
          Name: 'web',
          Count: 2,
          Tasks: [
            {
              Name: 'server',
              Driver: 'docker',
              Config: {
                image: 'redis:7',
                ports: ['db'],
                args: ['--appendonly', 'yes', '--maxmemory', '256mb'],
              },
            },
          ],
        },
        { Name: 'metrics', Count: 1, Tasks: [{ Name: 'exporter', Driver: 'docker' }] },
      ],
      Meta: { team: 'platform' },
    },
  }),
]);

const nested = planOf([
  jobChange({
    action: 'update',
    id: 'cache',
    diffs: [
      { path: 'TaskGroups[web].Count', op: 'change', before: 2, after: 3, note: 'forces create' },
      {
        path: 'TaskGroups[web].Tasks[server].Config.image',
        op: 'change',
        before: 'redis:7',
        after: 'redis:8',
        note: 'forces create/destroy update',
      },
      { path: 'TaskGroups[web].Tasks[server].Env.MODE', op: 'add', after: 'replica' },
      {
        path: 'TaskGroups[api]',
        op: 'add',
        after: {
          Name: 'api',
          Count: 1,
          Tasks: [{ Name: 'app', Driver: 'docker', Config: { image: 'api:1' } }],
        },
      },
      { path: 'Priority', op: 'change', before: 50, after: 70 },
    ],
  }),
]);

const certificate = (serial: string) =>
  [
    '-----BEGIN CERTIFICATE-----',
    'MIIBszCCAVmgAwIBAgIUQ2xvdWQgQ2VydGlmaWNhdGUgQXV0aG9yaXR5MAoGCCqG',
    'SM49BAMCMBoxGDAWBgNVBAMMD0NvbnZlcmdlIFRlc3QgQ0EwHhcNMjYwMTAxMDAw',
    `MDAwWhcNMjcwMTAxMDAwMDAwWjAaMRgwFgYDVQQDDA9Db252ZXJnZSBUZXN0IENB${serial}`,
    'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE7m3vJ0yQy3d0n8wq2m1x1Jk0c1Zy',
    'o2MwYTAdBgNVHQ4EFgQUAAAAAAAAAAAAAAAAAAAAAAAAAAAwHwYDVR0jBBgwFoAU',
    'AAAAAAAAAAAAAAAAAAAAAAAAAAAwDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQD',
    '-----END CERTIFICATE-----',
    '',
  ].join('\n');

const pem = planOf([
  {
    address: 'LdapConfig/ldap',
    key: { kind: 'LdapConfig', name: 'ldap' },
    action: 'update',
    diffs: [
      { path: 'certificate', op: 'change', before: certificate('AA'), after: certificate('BB') },
      { path: 'url', op: 'change', before: 'ldaps://old:636', after: 'ldaps://new:636' },
    ],
    after: null,
    before: null,
    dependsOn: [],
  },
]);

const uncomparable = planOf(
  [
    jobChange({
      action: 'noop',
      id: 'cache',
      notCompared: 'its job specification has a problem',
    }),
  ],
  [
    {
      key: { kind: 'Job', name: 'cache', namespace: 'default' },
      message: 'Failed to parse job: cache.hcl:4,13-5,1: Invalid expression',
      position: { file: 'jobs.yaml', line: 5, col: 13 },
    },
  ],
);

describe('a job created', () => {
  it('shows task groups and tasks as blocks named by their Name, short values on one line', () => {
    expect(human(create)).toMatchInlineSnapshot(`
      "Converge will perform the following actions:

        # Job "cache" in namespace default will be created
        + Job/default/cache
            + ID          = "cache"
            + Datacenters = ["dc1"]
            + TaskGroups["web"] {
                + Name  = "web"
                + Count = 2
                + Tasks["server"] {
                    + Name   = "server"
                    + Driver = "docker"
                    + Config = {
                        + image = "redis:7"
                        + ports = ["db"]
                        + args  = ["--appendonly", "yes", "--maxmemory", "256mb"]
                      }
                  }
              }
            + TaskGroups["metrics"] {
                + Name  = "metrics"
                + Count = 1
                + Tasks["exporter"] {
                    + Name   = "exporter"
                    + Driver = "docker"
                  }
              }
            + Meta        = { team = "platform" }

      Plan: 1 to add, 0 to change, 0 to replace, 0 to destroy, 0 unchanged.
      "
    `);
  });

  it('is the same blocks in the Markdown diff', () => {
    expect(diffBlock(renderMarkdown(create))).toMatchInlineSnapshot(`
      "+ Job/default/cache
      +     ID          = "cache"
      +     Datacenters = ["dc1"]
      +     TaskGroups["web"] {
      +         Name  = "web"
      +         Count = 2
      +         Tasks["server"] {
      +             Name   = "server"
      +             Driver = "docker"
      +             Config = {
      +                 image = "redis:7"
      +                 ports = ["db"]
      +                 args  = ["--appendonly", "yes", "--maxmemory", "256mb"]
      +             }
      +         }
      +     }
      +     TaskGroups["metrics"] {
      +         Name  = "metrics"
      +         Count = 1
      +         Tasks["exporter"] {
      +             Name   = "exporter"
      +             Driver = "docker"
      +         }
      +     }
      +     Meta        = { team = "platform" }
      "
    `);
  });
});

describe('a change inside a job', () => {
  it('is marked at the depth where it happens, inside the task group and task it belongs to', () => {
    expect(human(nested)).toMatchInlineSnapshot(`
      "Converge will perform the following actions:

        # Job "cache" in namespace default will be updated in place
        ~ Job/default/cache  (id cache)
            ~ TaskGroups["web"] {
                ~ Count = 2 -> 3 # forces create
                ~ Tasks["server"] {
                    ~ Config = {
                        ~ image = "redis:7" -> "redis:8" # forces create/destroy update
                      }
                    ~ Env = {
                        + MODE = "replica"
                      }
                  }
              }
            + TaskGroups["api"] {
                + Name  = "api"
                + Count = 1
                + Tasks["app"] {
                    + Name   = "app"
                    + Driver = "docker"
                    + Config = { image = "api:1" }
                  }
              }
            ~ Priority = 50 -> 70

      Plan: 0 to add, 1 to change, 0 to replace, 0 to destroy, 0 unchanged.
      "
    `);
  });

  it('reads the same in Markdown, `~` as `!` so GitHub colours it', () => {
    expect(diffBlock(renderMarkdown(nested))).toMatchInlineSnapshot(`
      "~ Job/default/cache
      !     TaskGroups["web"] {
      !         Count = 2 -> 3  # forces create
      !         Tasks["server"] {
      !             Config = {
      !                 image = "redis:7" -> "redis:8"  # forces create/destroy update
                    }
      !             Env = {
      +                 MODE = "replica"
                    }
                }
            }
      +     TaskGroups["api"] {
      +         Name  = "api"
      +         Count = 1
      +         Tasks["app"] {
      +             Name   = "app"
      +             Driver = "docker"
      +             Config = { image = "api:1" }
                }
            }
      !     Priority = 50 -> 70
      "
    `);
  });

  it('matches list items by name when a kind reports a whole list as changed', () => {
    const whole = planOf([
      jobChange({
        action: 'update',
        diffs: [
          {
            path: 'TaskGroups',
            op: 'change',
            before: [
              { Name: 'web', Count: 2, Tasks: [{ Name: 'server', Driver: 'docker' }] },
              { Name: 'old', Count: 1 },
            ],
            after: [
              { Name: 'web', Count: 3, Tasks: [{ Name: 'server', Driver: 'docker' }] },
              { Name: 'new', Count: 1 },
            ],
          },
        ],
      }),
    ]);
    expect(human(whole)).toMatchInlineSnapshot(`
      "Converge will perform the following actions:

        # Job "cache" in namespace default will be updated in place
        ~ Job/default/cache
            ~ TaskGroups["web"] {
                ~ Count = 2 -> 3
              }
            - TaskGroups["old"] {
                - Name  = "old"
                - Count = 1
              }
            + TaskGroups["new"] {
                + Name  = "new"
                + Count = 1
              }

      Plan: 0 to add, 1 to change, 0 to replace, 0 to destroy, 0 unchanged.
      "
    `);
  });
});

describe('a multi-line value that changes', () => {
  it('is a line diff inside the attribute: the changed lines and two lines of context', () => {
    expect(human(pem)).toMatchInlineSnapshot(`
      "Converge will perform the following actions:

        # LdapConfig "ldap" will be updated in place
        ~ LdapConfig/ldap
            ~ certificate = <<-EOT
                  # (1 unchanged line hidden)
                  MIIBszCCAVmgAwIBAgIUQ2xvdWQgQ2VydGlmaWNhdGUgQXV0aG9yaXR5MAoGCCqG
                  SM49BAMCMBoxGDAWBgNVBAMMD0NvbnZlcmdlIFRlc3QgQ0EwHhcNMjYwMTAxMDAw
                - MDAwWhcNMjcwMTAxMDAwMDAwWjAaMRgwFgYDVQQDDA9Db252ZXJnZSBUZXN0IENBAA
                + MDAwWhcNMjcwMTAxMDAwMDAwWjAaMRgwFgYDVQQDDA9Db252ZXJnZSBUZXN0IENBBB
                  MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE7m3vJ0yQy3d0n8wq2m1x1Jk0c1Zy
                  o2MwYTAdBgNVHQ4EFgQUAAAAAAAAAAAAAAAAAAAAAAAAAAAwHwYDVR0jBBgwFoAU
                  # (2 unchanged lines hidden)
              EOT
            ~ url         = "ldaps://old:636" -> "ldaps://new:636"

      Plan: 0 to add, 1 to change, 0 to replace, 0 to destroy, 0 unchanged.
      "
    `);
  });

  it('is the same line diff in Markdown', () => {
    expect(diffBlock(renderMarkdown(pem))).toMatchInlineSnapshot(`
      "~ LdapConfig/ldap
      !     certificate = <<-EOT
                # (1 unchanged line hidden)
                MIIBszCCAVmgAwIBAgIUQ2xvdWQgQ2VydGlmaWNhdGUgQXV0aG9yaXR5MAoGCCqG
                SM49BAMCMBoxGDAWBgNVBAMMD0NvbnZlcmdlIFRlc3QgQ0EwHhcNMjYwMTAxMDAw
      -         MDAwWhcNMjcwMTAxMDAwMDAwWjAaMRgwFgYDVQQDDA9Db252ZXJnZSBUZXN0IENBAA
      +         MDAwWhcNMjcwMTAxMDAwMDAwWjAaMRgwFgYDVQQDDA9Db252ZXJnZSBUZXN0IENBBB
                MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE7m3vJ0yQy3d0n8wq2m1x1Jk0c1Zy
                o2MwYTAdBgNVHQ4EFgQUAAAAAAAAAAAAAAAAAAAAAAAAAAAwHwYDVR0jBBgwFoAU
                # (2 unchanged lines hidden)
            EOT
      !     url         = "ldaps://old:636" -> "ldaps://new:636"
      "
    `);
  });

  it('says what differs when no line shows it: the final line break, trailing whitespace', () => {
    const text = (before: string, after: string) =>
      human(
        planOf([
          {
            address: 'AclRole/default/web',
            key: { kind: 'AclRole', name: 'web', namespace: 'default' },
            action: 'update',
            diffs: [{ path: 'Description', op: 'change', before, after }],
            before: { Description: before },
            after: { Description: after },
            dependsOn: [],
          },
        ]),
      );
    // `|` to `|-` in YAML: the same three lines, the final line break gone.
    expect(text('one\ntwo\nthree\n', 'one\ntwo\nthree')).toContain('# the final line break is removed');
    expect(text('one\r\ntwo\r\n', 'one\ntwo\n')).toContain('# line endings change from CRLF to LF');
    expect(text('a\r\nb\nc\n', 'a\r\nb\r\nc\r\n')).toContain('# line endings change from mixed to CRLF');
    // Said beside changed lines too.
    const both = text('a\nb\nc', 'a\nB\nc\n');
    expect(both).toMatch(/- b\n.*\+ B/s);
    expect(both).toContain('# a final line break is added');
    const spaces = text('Owned by team api.\nsecond', 'Owned by team api.  \nsecond');
    expect(spaces).toMatch(/- Owned by team api\.\n/);
    expect(spaces).toMatch(/\+ Owned by team api\. {2} # ends with 2 spaces/);
  });

  it('keeps both whole values in --json', () => {
    const json = planToJson(pem, '9.9.9');
    expect(json.changes[0]?.diffs[0]).toEqual({
      path: 'certificate',
      op: 'change',
      before: certificate('AA'),
      after: certificate('BB'),
    });
  });
});

describe('an object that could not be compared', () => {
  it('makes the headline say how many objects could not be planned and why, never "No changes"', () => {
    const text = human(uncomparable);
    expect(text).not.toContain('No changes');
    expect(text).not.toContain('up to date');
    expect(text).toMatchInlineSnapshot(`
      "Plan incomplete: 1 object could not be planned:
        Job/default/cache: jobs.yaml:5:13: Failed to parse job: cache.hcl:4,13-5,1: Invalid expression

        # Job "cache" in namespace default could not be planned
        ? Job/default/cache  (id cache)
            # not compared: its job specification has a problem

      Plan: 0 to add, 0 to change, 0 to replace, 0 to destroy, 0 unchanged, 1 not planned.
      "
    `);
  });

  it('is a caution and a table row in Markdown, never "No changes"', () => {
    const md = renderMarkdown(uncomparable);
    expect(md).not.toContain('No changes');
    expect(md).toMatchInlineSnapshot(`
      "### Converge plan

      **Plan: 0 to add, 0 to change, 0 to replace, 0 to destroy, 0 unchanged, 1 not planned.**

      > [!CAUTION]
      > **Plan incomplete: 1 object could not be planned:**
      > - \`Job/default/cache\`: \`jobs.yaml:5:13\` Failed to parse job: cache.hcl:4,13-5,1: Invalid expression

      | Kind | Add | Change | Replace | Destroy | Unchanged | Not planned |
      |---|--:|--:|--:|--:|--:|--:|
      | Job | 0 | 0 | 0 | 0 | 0 | 1 |

      | Action | Kind | Name | In |
      |---|---|---|---|
      | \`?\` not planned | Job | cache | namespace default |

      "
    `);
  });

  it('makes --json incomplete, with the object counted once, as not planned, in the summary', () => {
    const json = planToJson(uncomparable, '9.9.9');
    expect(json.complete).toBe(false);
    expect(json.summary).toEqual({ create: 0, update: 0, replace: 0, delete: 0, noop: 0, unplanned: 1 });
    expect(json.changes[0]?.not_compared).toBe('its job specification has a problem');
  });

  it('is named by the kind alone when no problem was reported for it', () => {
    const text = human(
      planOf([jobChange({ action: 'noop', notCompared: 'its job specification has a problem' })]),
    );
    expect(text).toContain(
      'Plan incomplete: 1 object could not be planned:\n  Job/default/cache: not compared: its job specification has a problem\n',
    );
  });

  it('leaves the changes that could be planned, under a headline that says they are not all', () => {
    const mixed = planOf(
      [
        ...uncomparable.changes,
        ...nested.changes.map((c) => ({ ...c, address: 'Job/default/web', key: { ...c.key, name: 'web' } })),
      ],
      uncomparable.problems,
    );
    const text = human(mixed);
    expect(text).toContain('For the objects it could plan, Converge would perform the following actions:');
    expect(text).toContain(
      'Plan: 0 to add, 1 to change, 0 to replace, 0 to destroy, 0 unchanged, 1 not planned.',
    );
  });
});

describe('the lines of a multi-line value from an untrusted manifest', () => {
  const hostile = planOf([
    jobChange({
      action: 'update',
      diffs: [
        {
          path: 'Meta.description',
          op: 'change',
          before: 'first\nsecond\n',
          after: 'first\n::error file=x::INJECTED\n\u001b[2K\u001b[1A\r\u202eevil\n',
        },
      ],
    }),
  ]);

  it('act on no terminal or CI log: controls and bidi escaped, no line a workflow command', () => {
    for (const shown of [human(hostile), renderMarkdown(hostile)]) {
      expect(shown).not.toMatch(/[\u001b\r\u0080-\u009f\u202a-\u202e\u2066-\u2069]/);
      expect(shown.split('\n').filter((line) => line.replace(/^[-+!~ ]+/, '').startsWith('::'))).toEqual([]);
      // A lone carriage return breaks the line like a newline: it cannot overwrite what came before.
      expect(shown).toContain('\\u001b[2K\\u001b[1A\n');
      expect(shown).toContain('\\u202eevil\n');
      expect(shown).toContain('\\u003a:error file=x::INJECTED');
    }
  });
});

describe('a multi-line string inside a created object', () => {
  it('is a heredoc in a block, not one line of escaped newlines', () => {
    const plan = planOf([
      jobChange({
        action: 'create',
        after: { Templates: [{ DestPath: 'local/app.conf', EmbeddedTmpl: 'port = 8080\nmode = "fast"\n' }] },
      }),
    ]);
    expect(human(plan)).toContain(
      [
        '      + Templates = [',
        '          + {',
        '              + DestPath     = "local/app.conf"',
        '              + EmbeddedTmpl = <<-EOT',
        '                    port = 8080',
        '                    mode = "fast"',
        '                EOT',
        '            },',
        '        ]',
      ].join('\n'),
    );
  });
});

describe('a duration that changes', () => {
  // The kinds hand durations over in the manifest's form (`1h`, `5m`), never seconds or nanoseconds.
  const plan = planOf([
    jobChange({
      action: 'update',
      address: 'LdapConfig/ldap',
      key: { kind: 'LdapConfig', name: 'ldap' },
      diffs: [{ path: 'token_ttl', op: 'change', before: '1h', after: '2h' }],
    }),
    jobChange({
      action: 'update',
      diffs: [{ path: 'TaskGroups[web].Update.HealthyDeadline', op: 'change', before: '1m', after: '5m' }],
    }),
  ]);

  it('reads in the units the manifest wrote, at the depth where it changes', () => {
    const out = human(plan);
    expect(out).toContain('~ token_ttl = "1h" -> "2h"');
    expect(out).toMatch(/~ TaskGroups\["web"\] \{\n\s+~ Update = \{\n\s+~ HealthyDeadline = "1m" -> "5m"/);
    expect(out).not.toMatch(/3600|7200|60000000000/);
  });
});

describe('a change a kind can tell happens but not to what', () => {
  it('is the attribute alone with its note, never `= null -> null`', () => {
    const plan = planOf([
      jobChange({
        action: 'update',
        diffs: [{ path: 'TaskGroups[web]', op: 'change', note: 'not itemised' }],
      }),
    ]);
    const text = human(plan);
    expect(text).toContain('~ TaskGroups["web"] # not itemised');
    expect(text).not.toContain('null -> null');
    expect(diffBlock(renderMarkdown(plan))).not.toContain('null -> null');
  });
});
