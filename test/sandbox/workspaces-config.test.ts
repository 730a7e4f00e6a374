/** Workspace service: its config section (checks with file:line:col), defaults, and persistence. */
import { createHash } from 'node:crypto';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  loadSandboxConfig,
  type SandboxConfig,
  SandboxConfigError,
  startSandbox,
} from '../../src/sandbox/index.js';
import { apiFor, tempDir } from './helpers.js';

let dir: ReturnType<typeof tempDir>;
let n = 0;

beforeEach(() => {
  dir = tempDir('sandbox-workspaces');
});

afterEach(() => {
  dir.remove();
});

function configFile(text: string): string {
  const path = join(dir.path, `sandbox-${++n}.yaml`);
  writeFileSync(path, text);
  return path;
}

function errorOf(fn: () => unknown): SandboxConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof SandboxConfigError) return err;
    throw err;
  }
  throw new Error('expected a SandboxConfigError');
}

describe('the workspaces config section', () => {
  it('loads the documented example', async () => {
    const path = configFile(`workspaces:
  organizations:
    - name: acme
      projects: [platform]
      forceDeleteByAdmins: false
      teams:
        - name: owners
        - name: devs
          manageWorkspaces: false
          access: { "*": { runs: read, lock: true, admin: false, stateVersions: write }, "web-prod": { admin: true } }
      workspaces:
        - { name: web-prod, project: platform, tags: [prod] }
tokens:
  - name: alice
    secret: alice-token
    workspaces: { user: alice, teams: { acme: [devs] } }
  - name: devs-team
    secret: devs-token
    workspaces: { team: devs, organization: acme }
  - name: acme-org
    secret: org-token
    workspaces: { organization: acme }
`);
    const sandbox = await startSandbox({ config: path });
    try {
      const api = apiFor(sandbox);
      const ws = await api('GET', '/api/v2/organizations/acme/workspaces/web-prod', { token: 'alice-token' });
      expect(ws.status).toBe(200);
      expect(ws.json()).toMatchObject({
        data: { attributes: { 'tag-names': ['prod'], permissions: { 'can-update': true } } },
      });
      // Only the configured organization exists: no implicit "sandbox".
      expect((await api('GET', '/api/v2/organizations/sandbox/workspaces')).status).toBe(404);
    } finally {
      await sandbox.close();
    }
  });

  it('starts with organization "sandbox" (Default Project, owners) without a section', async () => {
    const sandbox = await startSandbox();
    try {
      const api = apiFor(sandbox);
      const projects = await api('GET', '/api/v2/organizations/sandbox/projects');
      expect(projects.json()).toMatchObject({
        data: [{ type: 'projects', attributes: { name: 'Default Project' } }],
      });
    } finally {
      await sandbox.close();
    }
  });

  it.each([
    [
      'an unknown team in a user token',
      'workspaces:\n  organizations: [{ name: acme }]\ntokens:\n  - name: a\n    secret: s\n    workspaces: { user: a, teams: { acme: [devs] } }\n',
      ':6:44: tokens[0].workspaces.teams.acme[0]: no team "devs" in organization "acme"',
    ],
    [
      'a team token without organization',
      'tokens:\n  - name: a\n    secret: s\n    workspaces: { team: devs }\n',
      ':4:17: tokens[0].workspaces: a team token needs organization: the team belongs to one',
    ],
    [
      'a token naming an organization that does not exist',
      'tokens:\n  - name: a\n    secret: s\n    workspaces: { organization: nope }\n',
      'tokens[0].workspaces.organization: no organization "nope" in the workspaces section',
    ],
    [
      'a bad access level',
      'workspaces:\n  organizations:\n    - name: acme\n      teams:\n        - name: devs\n          access: { "*": { runs: write } }\n',
      ':6:34: workspaces.organizations[0].teams[0].access.*.runs: must be one of: none, read, plan, apply',
    ],
    [
      'settings on the owners team',
      'workspaces:\n  organizations:\n    - name: acme\n      teams:\n        - { name: owners, manageWorkspaces: false }\n',
      ':5:11: workspaces.organizations[0].teams[0]: the owners team always has every right; it takes no settings',
    ],
    [
      'a project admin of an unknown project',
      'workspaces:\n  organizations:\n    - name: acme\n      teams:\n        - { name: devs, projectAdmin: [nope] }\n',
      'workspaces.organizations[0].teams[0].projectAdmin[0]: no project "nope"',
    ],
    [
      'a duplicate organization',
      'workspaces:\n  organizations:\n    - name: acme\n    - name: acme\n',
      ':4:13: workspaces.organizations[1].name: duplicate organization (also organizations[0])',
    ],
    [
      'a seed workspace with a bad name',
      'workspaces:\n  organizations:\n    - name: acme\n      workspaces:\n        - { name: "bad name" }\n',
      ':5:11: workspaces.organizations[0].workspaces[0]: Name is invalid',
    ],
    [
      'two seed workspaces with one name',
      'workspaces:\n  organizations:\n    - name: acme\n      workspaces: [{ name: a }, { name: a }]\n',
      'workspaces.organizations[0].workspaces[1]: Name has already been taken',
    ],
    [
      'an unknown key',
      'workspaces:\n  organisations: []\n',
      ':2:3: workspaces.organisations: unknown key; allowed here: engineVersion, organizations',
    ],
  ])('reports %s with its position', (_label, text, expected) => {
    const path = configFile(text);
    const err = errorOf(() => loadSandboxConfig(path));
    expect(err.message).toContain(`${path}${expected.startsWith(':') ? '' : ':'}`);
    expect(err.message).toContain(expected);
  });
});

describe('persistence', () => {
  const config: SandboxConfig = {
    workspaces: {
      organizations: [{ name: 'acme', projects: ['platform'], workspaces: [{ name: 'seeded' }] }],
    },
  };

  it('keeps workspaces, locks, projects and state versions across a restart', async () => {
    const raw = JSON.stringify({
      version: 4,
      terraform_version: '1.9.8',
      serial: 1,
      lineage: 'l',
      outputs: {},
      resources: [],
    });
    const first = await startSandbox({ token: 'root', dataDir: dir.path, config });
    const api1 = apiFor(first);
    const created = await api1('POST', '/api/v2/organizations/acme/workspaces', {
      body: { data: { type: 'workspaces', attributes: { name: 'kept', 'tag-names': ['x'] } } },
    });
    const id = created.json<{ data: { id: string } }>().data.id;
    await api1('POST', `/api/v2/workspaces/${id}/actions/lock`);
    const sv = await api1('POST', `/api/v2/workspaces/${id}/state-versions`, {
      body: {
        data: {
          type: 'state-versions',
          attributes: {
            serial: 1,
            md5: createHash('md5').update(raw).digest('hex'),
            state: Buffer.from(raw).toString('base64'),
          },
        },
      },
    });
    expect(sv.status).toBe(201);
    const svId = sv.json<{ data: { id: string } }>().data.id;
    expect((await api1('DELETE', '/api/v2/organizations/acme/workspaces/seeded')).status).toBe(204);
    const projectsBefore = (await api1('GET', '/api/v2/organizations/acme/projects')).json();
    const before = (await api1('GET', `/api/v2/workspaces/${id}`)).json<{ data: unknown }>().data;
    await first.close();
    expect(readdirSync(dir.path)).toContain('workspaces.json');

    const second = await startSandbox({ token: 'root', dataDir: dir.path, config });
    try {
      const api2 = apiFor(second);
      const after = await api2('GET', `/api/v2/workspaces/${id}`);
      // Same record (the webhook host part is not involved: no repository).
      expect(JSON.stringify(after.json<{ data: unknown }>().data)).toBe(JSON.stringify(before));
      expect(after.json()).toMatchObject({ data: { attributes: { locked: true, 'tag-names': ['x'] } } });
      // The lock holder is the same user: the lock can be released after the restart.
      expect((await api2('POST', `/api/v2/workspaces/${id}/actions/unlock`)).status).toBe(200);
      const current = await api2('GET', `/api/v2/workspaces/${id}/current-state-version`);
      expect(current.json()).toMatchObject({ data: { id: svId } });
      const url = current.json<{ data: { attributes: Record<string, string> } }>().data.attributes[
        'hosted-state-download-url'
      ]!;
      expect(await (await fetch(url)).text()).toBe(raw);
      expect((await api2('GET', '/api/v2/organizations/acme/projects')).json()).toEqual(
        JSON.parse(JSON.stringify(projectsBefore).replaceAll(first.url, second.url)),
      );
      // A seed deleted through the API stays deleted.
      expect((await api2('GET', '/api/v2/organizations/acme/workspaces/seeded')).status).toBe(404);
    } finally {
      await second.close();
    }
  });
});
