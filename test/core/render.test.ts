import { describe, expect, it } from 'vitest';
import { renderHuman } from '../../src/planner/render/human.js';
import { planToJson } from '../../src/planner/render/json.js';
import {
  renderFailedPlanMarkdown,
  renderInvalidManifestMarkdown,
  renderMarkdown,
} from '../../src/planner/render/markdown.js';
import { type Change, type Plan, summarise } from '../../src/planner/types.js';

function change(partial: Partial<Change> & Pick<Change, 'action'>): Change {
  const name = partial.key?.name ?? 'web';
  return {
    address: `AclRole/default/${name}`,
    key: { kind: 'AclRole', name, namespace: 'default' },
    diffs: [],
    after: null,
    before: null,
    dependsOn: [],
    ...partial,
  };
}

function planOf(changes: Change[]): Plan {
  return { changes, summary: summarise(changes), problems: [], requests: { registry: 2 } };
}

const sample = planOf([
  change({
    action: 'create',
    key: { kind: 'AclRole', name: 'new', namespace: 'default' },
    address: 'AclRole/default/new',
    after: { Description: 'fresh', Policies: [{ Name: 'p' }] },
  }),
  change({
    action: 'update',
    id: 'c0ffee',
    diffs: [
      { path: 'Description', op: 'change', before: 'old', after: 'new' },
      { path: 'Policies', op: 'add', after: { Name: 'service-read' } },
      { path: 'Policies', op: 'remove', before: { Name: 'gone' } },
    ],
  }),
  change({
    action: 'delete',
    key: { kind: 'AclRole', name: 'old', namespace: 'default' },
    address: 'AclRole/default/old',
    before: { Description: 'bye' },
  }),
  change({
    action: 'noop',
    key: { kind: 'AclRole', name: 'same', namespace: 'default' },
    address: 'AclRole/default/same',
  }),
]);

describe('human rendering', () => {
  const text = renderHuman(sample, { color: false });

  it('uses terraform symbols and aligned attributes', () => {
    expect(text).toContain('  + AclRole/default/new');
    expect(text).toContain('      + Description = "fresh"');
    expect(text).toContain('      + Policies    = [{ Name = "p" }]');
    expect(text).toContain('  ~ AclRole/default/web  (id c0ffee)');
    expect(text).toContain('      ~ Description = "old" -> "new"');
    expect(text).toContain('      + Policies    = { Name = "service-read" }');
    expect(text).toContain('      - Policies    = { Name = "gone" }');
    expect(text).toContain('  - AclRole/default/old');
    expect(text).toContain('Plan: 1 to add, 1 to change, 0 to replace, 1 to destroy, 1 unchanged.');
    expect(text).not.toContain('same');
  });

  it('has no escape codes without colour and has them with it', () => {
    expect(text).not.toContain('\u001b[');
    expect(renderHuman(sample, { color: true })).toContain('\u001b[32m+');
  });

  it('says so when nothing changes', () => {
    expect(renderHuman(planOf([change({ action: 'noop' })]), { color: false })).toContain('No changes.');
  });

  it('lists plan problems with their positions', () => {
    const plan = planOf([]);
    plan.problems.push({
      key: { kind: 'AclRole', name: 'x' },
      message: 'policy "nope" does not exist',
      position: { file: 'roles.yaml', line: 7, col: 15 },
    });
    expect(renderHuman(plan, { color: false })).toContain('roles.yaml:7:15: policy "nope" does not exist');
  });
});

describe('json rendering', () => {
  it('has format_version, every change with kind/name/action/diffs, and summary counts', () => {
    const json = planToJson(sample, '9.9.9');
    expect(json.format_version).toBe('1.12');
    expect(json.converge_version).toBe('9.9.9');
    expect(json.changes.map((c) => [c.kind, c.name, c.action])).toEqual([
      ['AclRole', 'new', 'create'],
      ['AclRole', 'web', 'update'],
      ['AclRole', 'old', 'delete'],
      ['AclRole', 'same', 'noop'],
    ]);
    expect(json.changes[1]?.diffs[0]).toEqual({
      path: 'Description',
      op: 'change',
      before: 'old',
      after: 'new',
    });
    expect(json.summary).toEqual({ create: 1, update: 1, replace: 0, delete: 1, noop: 1, unplanned: 0 });
    expect(json.complete).toBe(true);
    expect(json.changes.every((c) => c.planned)).toBe(true);
    expect(JSON.parse(JSON.stringify(json))).toEqual(json);
  });

  it("gives a create's attributes as add diffs, a masked one marked sensitive, and a deletion's as remove diffs", () => {
    const json = planToJson(
      planOf([
        change({
          action: 'create',
          key: { kind: 'LdapConfig', name: 'ldap' },
          address: 'LdapConfig/ldap',
          after: { url: 'ldap://dir', bindpass: '(sensitive value)' },
        }),
        change({ action: 'delete', before: { Description: 'gone' } }),
      ]),
      '9.9.9',
    );
    expect(json.changes[0]?.diffs).toEqual([
      { path: 'url', op: 'add', after: 'ldap://dir' },
      { path: 'bindpass', op: 'add', after: '(sensitive value)', sensitive: true },
    ]);
    expect(json.changes[1]?.diffs).toEqual([{ path: 'Description', op: 'remove', before: 'gone' }]);
    // A masked value inside an attribute (a job's Env entry) marks the attribute's diff too.
    const nested = planToJson(
      planOf([
        change({
          action: 'create',
          after: { TaskGroups: [{ Name: 'g', Env: { DB_PASSWORD: '(sensitive value)' } }], Type: 'service' },
        }),
      ]),
      '9.9.9',
    );
    expect(nested.changes[0]?.diffs.map((d) => [d.path, d.sensitive ?? false])).toEqual([
      ['TaskGroups', true],
      ['Type', false],
    ]);
  });

  it('marks an object that could not be planned `planned: false`, so counting actions matches summary', () => {
    const plan = planOf([
      change({
        action: 'create',
        key: { kind: 'AclRole', name: 'ok', namespace: 'default' },
        address: 'AclRole/default/ok',
      }),
      change({
        action: 'create',
        key: { kind: 'AclRole', name: 'bad', namespace: 'default' },
        address: 'AclRole/default/bad',
      }),
    ]);
    plan.problems.push({
      key: { kind: 'AclRole', name: 'bad', namespace: 'default' },
      message: 'policy "nope" does not exist',
    });
    const json = planToJson(plan, '9.9.9');
    expect(json.changes.map((c) => [c.name, c.action, c.planned])).toEqual([
      ['ok', 'create', true],
      ['bad', 'create', false],
    ]);
    expect(json.summary).toMatchObject({ create: 1, unplanned: 1 });
    expect(json.changes.filter((c) => c.planned && c.action === 'create')).toHaveLength(json.summary.create);
  });
});

describe('markdown rendering', () => {
  it('has a summary line, a table of changes and a folded diff', () => {
    const md = renderMarkdown(sample);
    expect(md).toContain('**Plan: 1 to add, 1 to change, 0 to replace, 1 to destroy, 1 unchanged.**');
    expect(md).toContain('| `+` create | AclRole | new | namespace default |');
    expect(md).toContain('| `-` delete | AclRole | old | namespace default |');
    expect(md).toContain('<details><summary>Attribute changes</summary>');
    expect(md).toContain('```diff');
    expect(md).toContain('!     Description = "old" -> "new"');
    expect(md).not.toContain('| same |');
  });

  it('names the connection of an object on a named Connection, with or without a namespace', () => {
    const md = renderMarkdown(
      planOf([
        change({ action: 'update', key: { kind: 'AclRole', name: 'web', namespace: 'default' } }),
        change({
          action: 'update',
          key: { kind: 'AclRole', name: 'web', namespace: 'default', connection: 'eu' },
          address: 'AclRole@eu/default/web',
        }),
        change({
          action: 'create',
          key: { kind: 'LdapConfig', name: 'ldap', connection: 'eu' },
          address: 'LdapConfig@eu/ldap',
        }),
      ]),
    );
    expect(md).toContain('| `~` update | AclRole | web | namespace default |\n');
    expect(md).toContain('| `~` update | AclRole | web | namespace default, connection eu |\n');
    expect(md).toContain('| `+` create | LdapConfig | ldap | connection eu |\n');
  });

  it('stays under the comment limit, saying it was cut', () => {
    const many = planOf(
      Array.from({ length: 400 }, (_, i) =>
        change({
          action: 'create',
          key: { kind: 'AclRole', name: `r${i}`, namespace: 'default' },
          address: `AclRole/default/r${i}`,
          after: { Description: 'x'.repeat(200) },
        }),
      ),
    );
    const md = renderMarkdown(many, { limit: 10_000 });
    expect(md.length).toBeLessThanOrEqual(10_000);
    expect(md).toContain('truncated');
    expect(md.trimEnd().endsWith('</details>')).toBe(true);
  });

  it("keeps a big plan under GitHub's 65,535 characters by cutting whole objects' details", () => {
    const n = 600;
    const big = planOf(
      Array.from({ length: n }, (_, i) =>
        change({
          action: 'create',
          key: { kind: 'AclRole', name: `r${i}`, namespace: 'default' },
          address: `AclRole/default/r${i}`,
          after: { Description: `${i}:${'x'.repeat(300)}` },
        }),
      ),
    );
    const md = renderMarkdown(big);
    expect(md.length).toBeLessThanOrEqual(65_535);
    // The headline and the table per kind are kept whole.
    expect(md).toContain('**Plan: 600 to add, 0 to change, 0 to replace, 0 to destroy, 0 unchanged.**');
    expect(md).toContain('| AclRole | 600 | 0 | 0 | 0 | 0 |');
    // Every object the details show is shown whole: its header and its attribute line.
    const shown = [...md.matchAll(/^\+ AclRole\/default\/r(\d+)$/gm)].map((m) => Number(m[1]));
    expect(shown.length).toBeGreaterThan(0);
    expect(shown.length).toBeLessThan(n);
    for (const i of shown) expect(md).toContain(`+ AclRole/default/r${i}\n+     Description = "${i}:`);
    // The note says how many were cut and names the first of them.
    const cut = n - shown.length;
    expect(md).toContain(
      `_… truncated: the attribute changes of ${cut} objects (\`AclRole/default/r${shown.length}\`,`,
    );
    expect(md).toContain(`and ${cut - 3} more) are left out to keep this under 65,535 characters`);
    // Said above the collapsed section too, for a reviewer who never opens it.
    const warning = `> The attribute changes of ${cut} objects are left out below (the comment's length limit)`;
    expect(md.indexOf(warning)).toBeGreaterThan(-1);
    expect(md.indexOf(warning)).toBeLessThan(md.indexOf('<details>'));
    expect(md.trimEnd().endsWith('</details>')).toBe(true);
  });

  it('leaves out only the object whose details do not fit: the changes after a huge one are still shown', () => {
    const plan = planOf([
      change({
        action: 'create',
        key: { kind: 'AclRole', name: 'aa-notes', namespace: 'default' },
        address: 'AclRole/default/aa-notes',
        after: { Description: 'release notes line\n'.repeat(4_000) },
      }),
      ...Array.from({ length: 20 }, (_, i) =>
        change({
          action: 'update',
          key: { kind: 'AclRole', name: `r${i}`, namespace: 'default' },
          address: `AclRole/default/r${i}`,
          diffs: [{ path: 'Policies', op: 'add', after: { Name: 'global-management' }, item: true }],
        }),
      ),
    ]);
    const md = renderMarkdown(plan);
    expect(md.length).toBeLessThanOrEqual(65_535);
    // Before, the huge create came first and every change after it was cut with it.
    for (let i = 0; i < 20; i++) expect(md).toContain(`~ AclRole/default/r${i}\n`);
    expect(md).toContain('global-management');
    expect(md).toContain('_… truncated: the attribute changes of 1 object (`AclRole/default/aa-notes`)');
  });

  it('cuts a single object whose details alone are longer than the limit, keeping the table', () => {
    const huge = planOf([
      change({
        action: 'create',
        key: { kind: 'AclRole', name: 'huge', namespace: 'default' },
        address: 'AclRole/default/huge',
        after: { Description: 'y'.repeat(80_000) },
      }),
    ]);
    const md = renderMarkdown(huge);
    expect(md.length).toBeLessThanOrEqual(65_535);
    expect(md).toContain('| `+` create | AclRole | huge | namespace default |');
    expect(md).not.toContain('yyyyyyyyyy');
    expect(md).toContain('the attribute changes of 1 object (`AclRole/default/huge`) are left out');
    // No empty diff block left behind.
    expect(md).not.toContain('<details>');
    expect(md).not.toMatch(/```diff\n\s*```/);
  });

  it('escapes table cells', () => {
    const md = renderMarkdown(
      planOf([change({ action: 'create', key: { kind: 'AclRole', name: 'a|b' }, address: 'AclRole/a|b' })]),
    );
    expect(md).toContain('a\\|b');
  });
});

describe('markdown of a long plan', () => {
  it('lists deletions and replacements first, so the cut never hides them', () => {
    const creates = Array.from({ length: 1500 }, (_, i) =>
      change({ action: 'create', key: { kind: 'AclRole', name: `new-${i}`, namespace: 'default' } }),
    );
    const deletion = change({
      action: 'delete',
      key: { kind: 'AclRole', name: 'api-release', namespace: 'default' },
      address: 'AclRole/default/api-release',
      before: { Description: 'x' },
    });
    // In apply order the deletion comes last, where a long table is cut.
    const md = renderMarkdown(planOf([...creates, deletion]));
    expect(md).toMatch(/\| … \| \d+ more \| \| \|/);
    const table = md.split('\n').filter((l) => l.startsWith('| `'));
    expect(table[0]).toContain('api-release');
  });

  it("gives a deletion's reason in its diff, as the text plan does", () => {
    const md = renderMarkdown(
      planOf([
        change({
          action: 'delete',
          key: { kind: 'AclRole', name: 'old', namespace: 'default' },
          address: 'AclRole/default/old',
          before: { Description: 'x' },
          reason: 'declared absent in the manifest',
        }),
      ]),
    );
    expect(md).toContain('- AclRole/default/old\n      # declared absent in the manifest\n');
  });
});

describe('notes', () => {
  const note = "state: the workspace's state (serial 7) has moved on from state file s.tfstate (serial 3)";
  const noted = planOf([
    change({
      action: 'noop',
      id: 'ws-1',
      key: { kind: 'Workspace', name: 'seeded', namespace: 'acme' },
      address: 'Workspace/acme/seeded',
      namespaceLabel: 'organization',
      notes: [note],
    }),
    change({ action: 'noop', key: { kind: 'AclRole', name: 'quiet' }, address: 'AclRole/quiet' }),
  ]);

  it('shows an unchanged object that carries a note, with its heading, address and a # line', () => {
    const text = renderHuman(noted, { color: false });
    expect(text).toContain('No changes.');
    expect(text).toContain('  # Workspace "seeded" in organization acme is up to date\n');
    expect(text).toContain('    Workspace/acme/seeded  (id ws-1)\n');
    expect(text).toContain(`      # ${note}\n`);
    expect(text).not.toContain('quiet');
    expect(text).toContain('Plan: 0 to add, 0 to change, 0 to replace, 0 to destroy, 2 unchanged.');
  });

  it('shows a note under the heading of a change too', () => {
    const text = renderHuman(
      planOf([
        change({ action: 'update', diffs: [{ path: 'x', op: 'add', after: 1 }], notes: ['heads up'] }),
      ]),
      { color: false },
    );
    expect(text).toContain('  ~ AclRole/default/web\n      # heads up\n      + x = 1\n');
  });

  it('lists the notes in markdown, also when nothing changes', () => {
    const md = renderMarkdown(noted);
    expect(md).toContain('No changes.');
    // The note's parentheses escaped, as all text in the comment is (it renders as written).
    const escaped = note.replace(/[()]/g, (c) => `\\${c}`);
    expect(md).toContain(`> [!NOTE]\n> - \`Workspace/acme/seeded\`: ${escaped}\n`);
  });

  it('carries a notes array on every change in --json', () => {
    const json = planToJson(noted, '9.9.9');
    expect(json.changes.map((c) => c.notes)).toEqual([[note], []]);
  });
});

describe('markdown from a hostile manifest', () => {
  const hostile = planOf([
    change({
      action: 'update',
      key: { kind: 'AclRole', name: 'web', namespace: 'default' },
      diffs: [
        {
          path: 'Description',
          op: 'change',
          before: 'old',
          after:
            '```\n</details>\n\nNo changes. Live state matches the manifest.\n<img src=x onerror=alert(1)>',
        },
        { path: 'Meta', op: 'add', after: { 'a\n```\n# forged': 'x' } },
      ],
    }),
  ]);

  it('keeps every value inside the diff block: no fence, line or HTML of its own', () => {
    const md = renderMarkdown(hostile);
    const lines = md.split('\n');
    const open = lines.findIndex((l) => /^`{3,}diff$/.test(l));
    const fence = lines[open]!.replace(/diff$/, '');
    expect(fence.length).toBeGreaterThan(3);
    const close = lines.findIndex((l, i) => i > open && l === fence);
    // Nothing between the fences closes the block early, and the block ends where the renderer ends it.
    expect(lines.slice(open + 1, close).some((l) => /^`{3,}\s*$/.test(l) && l.length >= fence.length)).toBe(
      false,
    );
    expect(lines[close + 1]).toBe('</details>');
    expect(lines.filter((l) => l === 'No changes. Live state matches the manifest.')).toEqual([]);
    expect(lines.filter((l) => l.startsWith('# forged'))).toEqual([]);
  });

  it('escapes HTML and table breaks in problems and notes', () => {
    const md = renderMarkdown({
      ...hostile,
      problems: [
        { key: { kind: 'AclRole', name: 'web' }, message: 'refused: <img src=x> | injected | cell\nnext' },
      ],
    });
    const problemLine = md.split('\n').find((l) => l.includes('refused:'))!;
    expect(problemLine).not.toContain('<img');
    expect(problemLine).toContain('&lt;img src=x&gt; \\| injected \\| cell next');
  });
});

describe('markdown notes and problems name objects in code spans their names cannot end', () => {
  it('a backtick in a job ID does not let HTML out of the code span', () => {
    const name = 'md`<b>x<img_src=x_onerror=alert(1)>';
    const address = `Job/default/${name}`;
    const md = renderMarkdown(
      planOf([
        change({
          action: 'noop',
          key: { kind: 'Job', name, namespace: 'default' },
          address,
          notes: ['group web: 1 to place'],
        }),
      ]),
    );
    const note = md.split('\n').find((l) => l.includes('group web'))!;
    // Two backticks around a name holding one: the span ends only after the whole address.
    expect(note).toBe(`> - \`\`${address}\`\`: group web: 1 to place`);
  });
});

describe('blast radius from a hostile service', () => {
  const hostile = planOf([
    change({
      action: 'update',
      diffs: [{ path: 'x', op: 'add', after: 1 }],
      impact: ['changes the effective policies of 1 user: a|b<img src=x>\n::error::forged\u001b[2J'],
    }),
  ]);

  it('is one escaped list item in markdown: no table break, HTML or line of its own', () => {
    const md = renderMarkdown(hostile);
    expect(md).toContain('**Blast radius**');
    expect(md).toContain('a\\|b&lt;img src=x&gt; ::<!-- -->error::forged');
    expect(md.split('\n').filter((l) => l.startsWith('::'))).toEqual([]);
  });

  it('is one printable # line in the text plan', () => {
    const text = renderHuman(hostile, { color: false });
    expect(text).toContain(
      '      # changes the effective policies of 1 user: a|b<img src=x>\\n::error::forged\\u001b[2J\n',
    );
    expect(text).not.toContain('\u001b');
  });
});

describe('markdown from a pull request that writes markup', () => {
  // A name a Job may have, a policy name quoted in a problem, a service's error text: each would
  // render as the bot's own bold words, a link, or a ping of a team.
  const forged =
    '**Reviewed by security, safe to merge** [details](https://evil.example/) @acme/security `x`';
  const plan: Plan = {
    ...planOf([
      change({
        action: 'create',
        key: { kind: 'Job', name: `a|b*${forged}`, namespace: 'default' },
        address: `Job/default/a|b*${forged}`,
      }),
    ]),
    problems: [{ key: { kind: 'AclRole', name: 'r' }, message: `policy "${forged}" does not exist` }],
  };

  it('breaks what GitHub links or decorates in rendered text, and every line-start marker', () => {
    const md = renderFailedPlanMarkdown(
      'job_www.evil.com :white_check_mark: fixes #12 GH-3 org/repo#4\n===\n   ---\n  - item',
    );
    expect(md).toContain('job\\_www<!-- -->.evil.com');
    expect(md).toContain(':<!-- -->white\\_check\\_mark:');
    expect(md).toContain('\\#<!-- -->12 GH-<!-- -->3 org/repo\\#<!-- -->4');
    expect(md).toContain('\n> \\===\n> \\---\n> \\- item\n');
  });

  it('renders none of it as markup: no bold, link, code span, mention or bare link', () => {
    // The diff block is a code fence, where nothing renders: the text outside it is what counts.
    const outsideFences = (md: string) => md.replace(/^(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\1\s*$/gm, '');
    for (const md of [renderMarkdown(plan), renderFailedPlanMarkdown(`500 ${forged}`)].map(outsideFences)) {
      expect(md).not.toContain('**Reviewed');
      expect(md).not.toContain('[details](');
      expect(md).not.toContain('@acme/security');
      expect(md).not.toContain('https://evil');
      expect(md).toContain(
        '\\*\\*Reviewed by security, safe to merge\\*\\* \\[details\\]\\(https:<!-- -->//evil.example/\\) @<!-- -->acme/security \\`x\\`',
      );
    }
  });
});

describe('markdown cells from a hostile manifest and service', () => {
  // ESC (a terminal's sequences), CSI as one C1 byte, NEL, a right-to-left override and its isolate,
  // a zero-width space, a line separator: each could hide or reorder what a reviewer reads.
  const controls = '\u001b[2J\u009b31m\u0085\u202egnp.exe\u2066x\u200b\u2028';
  const name = `web${controls}`;
  const address = `AclRole/default/${name}`;
  const hostile: Plan = {
    ...planOf([
      change({
        action: 'update',
        key: { kind: 'AclRole', name, namespace: 'default' },
        address,
        diffs: [{ path: 'Description', op: 'change', before: 'old', after: `new${controls}` }],
        notes: [`note${controls}`],
        impact: [`impact${controls}`],
      }),
    ]),
    problems: [{ key: { kind: 'AclRole', name: 'other' }, message: `refused${controls}` }],
  };
  /** Every C0 control but the line feed that ends a line, DEL, C1, and the bidi and invisible marks. */
  const UNSAFE =
    /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/;

  it('lets no C0, C1 or bidi control into the comment: each reads as its escape', () => {
    const md = renderMarkdown(hostile);
    expect(md).not.toMatch(UNSAFE);
    // In the table's name cell, the notes, the blast radius, the problems and the diff block alike.
    // Outside the diff block each escape's backslash and bracket are escaped too (they render as is).
    expect(md).toContain(
      '| web\\\\u001b\\[2J\\\\u009b31m\\\\u0085\\\\u202egnp.exe\\\\u2066x\\\\u200b\\\\u2028 |',
    );
    expect(md).toContain('note\\\\u001b\\[2J\\\\u009b31m');
    expect(md).toContain('impact\\\\u001b\\[2J\\\\u009b31m');
    expect(md).toContain('refused\\\\u001b\\[2J\\\\u009b31m');
    expect(md).toContain('"old" -> "new\\u001b[2J\\u009b31m');
  });

  it('lets none into the "Manifest invalid" section either', () => {
    const md = renderInvalidManifestMarkdown([
      { position: { file: `roles${controls}.yaml`, line: 3, col: 1 }, message: `bad${controls}` },
    ]);
    expect(md).not.toMatch(UNSAFE);
    expect(md).toContain('`roles\\u001b[2J\\u009b31m');
    expect(md).toContain(':3:1` bad\\\\u001b\\[2J');
  });
});

describe('text plan values from a hostile manifest and service', () => {
  // JSON.stringify escapes C0 controls, but C1 (a one-byte CSI), bidi overrides and line separators
  // pass through it: a terminal would act on them or reorder what the reader sees.
  const controls = '\u009b31m\u0085\u202egnp.exe\u2066x\u200b\u2028';
  const hostile: Plan = planOf([
    change({
      action: 'update',
      key: { kind: 'AclRole', name: 'web', namespace: 'default' },
      address: 'AclRole/default/web',
      diffs: [
        { path: 'Description', op: 'change', before: 'old', after: `new${controls}` },
        { path: 'Meta', op: 'change', before: { a: 'b' }, after: { [`k${controls}`]: `v${controls}` } },
      ],
    }),
  ]);
  const UNSAFE = /[\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/;

  it('shows each C1 and bidi character in a value or key as its escape', () => {
    const text = renderHuman(hostile, { color: false });
    expect(text).not.toMatch(UNSAFE);
    expect(text).toContain('"new\\u009b31m\\u0085\\u202egnp.exe');
    // The key holds a dot (gnp.exe): quoted whole, as HCL writes such a key, never split as nesting.
    expect(text).toContain('+ "k\\u009b31m\\u0085\\u202egnp.exe\\u2066x\\u200b\\u2028" = "v');
  });
});
