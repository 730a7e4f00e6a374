/**
 * Creates whose answer is lost: the service acts, then the connection drops or the answer is a 503.
 * `converge apply` must read the object back before sending the create again, so exactly one object
 * exists afterwards, the apply succeeds, and nothing fails on "already exists" for its own write.
 * In-process against the sandbox, through a small proxy that forwards each request and then, for the
 * first create it sees, throws the answer away.
 */
import { writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

const ORG = 'lost-org';
let sandbox: RunningSandbox;

beforeAll(async () => {
  sandbox = await startSandbox({
    port: 0,
    config: { workspaces: { organizations: [{ name: ORG }] } },
  });
});
afterAll(async () => {
  await sandbox?.close();
});

type Fault = 'reset' | '503';

interface Proxy {
  url: string;
  /** Creates that reached the service through the proxy, the one whose answer was dropped included. */
  creates: number;
  close(): Promise<void>;
}

const proxies: Proxy[] = [];
afterEach(async () => {
  await Promise.all(proxies.splice(0).map((p) => p.close()));
});

/**
 * Forwards everything to the sandbox. The first request `isCreate` matches is carried out by the
 * sandbox, and then its answer is replaced by `fault`: a dropped connection or a 503.
 */
async function faultyProxy(isCreate: (req: IncomingMessage) => boolean, fault: Fault): Promise<Proxy> {
  const target = new URL(sandbox.url);
  let faulted = false;
  const proxy: Proxy = { url: '', creates: 0, close: async () => undefined };
  const server: Server = createServer((req, res) => {
    const create = isCreate(req);
    if (create) proxy.creates++;
    const upstream = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: target.host },
      },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (c: Buffer) => chunks.push(c));
        answer.on('end', () => {
          if (create && !faulted) {
            faulted = true;
            if (fault === 'reset') {
              req.socket.destroy();
              return;
            }
            res.writeHead(503, { 'content-type': 'application/json' });
            res.end('{"errors":["upstream went away"]}');
            return;
          }
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          res.end(Buffer.concat(chunks));
        });
      },
    );
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  proxy.url = `http://127.0.0.1:${port}`;
  proxy.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  proxies.push(proxy);
  return proxy;
}

function dirWith(files: Record<string, string>): string {
  const dir = tempDir('converge-lost-');
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  return dir;
}

function envThrough(proxy: Proxy): Record<string, string> {
  const env: Record<string, string> = {
    ...sandbox.env(),
    CONVERGE_STATE_DIR: tempDir('converge-lost-state-'),
    CONVERGE_WORKSPACES_ORGANIZATION: ORG,
    NO_COLOR: '1',
  };
  for (const name of Object.keys(env)) if (name.endsWith('_ADDR')) env[name] = proxy.url;
  return env;
}

async function sandboxGet<T>(p: string): Promise<T> {
  const res = await fetch(`${sandbox.url}${p}`, {
    headers: { authorization: `Bearer ${sandbox.rootToken}`, 'x-nomad-token': sandbox.rootToken },
  });
  return (await res.json()) as T;
}

const isRoleCreate = (req: IncomingMessage) =>
  req.method === 'PUT' && req.url?.split('?')[0] === '/v1/acl/role';
const isWorkspaceCreate = (req: IncomingMessage) =>
  req.method === 'POST' && req.url === `/api/v2/organizations/${ORG}/workspaces`;
const isJobRegister = (req: IncomingMessage) =>
  req.method === 'POST' && req.url?.startsWith('/v1/jobs?') === true;

describe.each<Fault>(['reset', '503'])(
  'a create whose answer is lost (%s after the service acted)',
  (fault) => {
    it('AclRole: read back by name, not sent again, exactly one role', async () => {
      const name = `lost-role-${fault}`;
      const proxy = await faultyProxy(isRoleCreate, fault);
      const dir = dirWith({
        'r.yaml': `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: ${name} }\nspec:\n  Description: made once\n`,
      });
      const result = await runCli(['apply', '-f', dir, '--auto-approve'], envThrough(proxy));
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('1 applied, 0 failed');
      const roles = await sandboxGet<{ Name: string }[]>('/v1/acl/roles');
      expect(roles.filter((r) => r.Name === name)).toHaveLength(1);
      expect(proxy.creates).toBe(1);
      // Read back, not sent again: said once, by the applier, and not counted as a request sent again.
      expect((result.stdout + result.stderr).match(/create answer lost/g)).toHaveLength(1);
      expect(result.stdout + result.stderr).not.toContain('sent again (the lines above');
      // And the next plan has nothing to do.
      const again = await runCli(['plan', '-f', dir], envThrough(proxy));
      expect(again.stdout).toContain('No changes');
    });

    it('Workspace: read back by name instead of failing on the name being taken, exactly one workspace', async () => {
      const name = `lost-ws-${fault}`;
      const proxy = await faultyProxy(isWorkspaceCreate, fault);
      const dir = dirWith({
        'w.yaml': `apiVersion: converge/v1\nkind: Workspace\nmetadata: { name: ${name} }\nspec: { description: made once }\n`,
      });
      const result = await runCli(['apply', '-f', dir, '--auto-approve'], envThrough(proxy));
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('1 applied, 0 failed');
      const list = await sandboxGet<{ data: { attributes: { name: string } }[] }>(
        `/api/v2/organizations/${ORG}/workspaces?page%5Bsize%5D=100`,
      );
      expect(list.data.filter((w) => w.attributes.name === name)).toHaveLength(1);
      expect(proxy.creates).toBe(1);
    });

    it('Job: read back by ID instead of refusing its own registration as "registered by someone else"', async () => {
      const name = `lost-job-${fault}`;
      const proxy = await faultyProxy(isJobRegister, fault);
      const dir = dirWith({
        'job.hcl': `job "${name}" {\n  datacenters = ["dc1"]\n  group "web" {\n    count = 1\n    task "server" {\n      driver = "docker"\n      config {\n        image = "redis:7"\n      }\n    }\n  }\n}\n`,
        'j.yaml': `apiVersion: converge/v1\nkind: Job\nmetadata: { name: ${name} }\nspec:\n  specFile: job.hcl\n`,
      });
      const result = await runCli(['apply', '-f', dir, '--auto-approve'], envThrough(proxy));
      expect(result.stderr + result.stdout).not.toMatch(/someone else/);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('1 applied, 0 failed');
      const jobs = await sandboxGet<{ ID: string }[]>('/v1/jobs');
      expect(jobs.filter((j) => j.ID === name)).toHaveLength(1);
      // Registered once: a second registration would have made version 1.
      expect((await sandboxGet<{ Version: number }>(`/v1/job/${name}`)).Version).toBe(0);
      expect(proxy.creates).toBe(1);
    });
  },
);

/** The workspace `name` as the service has it, with its lock. */
async function workspaceLock(name: string): Promise<{ locked: boolean; reason: string | null }> {
  const doc = await sandboxGet<{
    data: { attributes: { locked: boolean; 'locked-reason'?: string | null } };
  }>(`/api/v2/organizations/${ORG}/workspaces/${name}`);
  return { locked: doc.data.attributes.locked, reason: doc.data.attributes['locked-reason'] ?? null };
}

const isLock = (req: IncomingMessage) => req.method === 'POST' && /\/actions\/lock$/.test(req.url ?? '');
const isUnlock = (req: IncomingMessage) => req.method === 'POST' && /\/actions\/unlock$/.test(req.url ?? '');

describe.each<Fault>(['reset', '503'])(
  'a workspace lock or unlock whose answer is lost (%s after the service acted)',
  (fault) => {
    const workspace = (name: string, locked: boolean) =>
      dirWith({
        'w.yaml': `apiVersion: converge/v1\nkind: Workspace\nmetadata: { name: ${name} }\nspec:\n  description: frozen for the release\n  locked: ${locked}\n${locked ? '  lock-reason: release freeze\n' : ''}`,
      });

    it("takes the lock the manifest asks for: sent again, its 409 read back as this token's own lock", async () => {
      const name = `lost-lock-${fault}`;
      const direct = { ...envThrough({ url: sandbox.url } as Proxy) };
      expect((await runCli(['apply', '-f', workspace(name, false), '--auto-approve'], direct)).code).toBe(0);
      const proxy = await faultyProxy(isLock, fault);
      const result = await runCli(
        ['apply', '-f', workspace(name, true), '--auto-approve'],
        envThrough(proxy),
      );
      expect(result.code, result.stdout + result.stderr).toBe(0);
      expect(result.stdout).toContain('1 applied, 0 failed');
      expect(await workspaceLock(name)).toEqual({ locked: true, reason: 'release freeze' });
      const again = await runCli(['plan', '-f', workspace(name, true)], envThrough(proxy));
      expect(again.stdout).toContain('No changes');
    });

    it('releases its own lock: read back, not failed, and not sent blindly', async () => {
      const name = `lost-unlock-${fault}`;
      const direct = { ...envThrough({ url: sandbox.url } as Proxy) };
      expect((await runCli(['apply', '-f', workspace(name, true), '--auto-approve'], direct)).code).toBe(0);
      const proxy = await faultyProxy(isUnlock, fault);
      const result = await runCli(
        ['apply', '-f', workspace(name, false), '--auto-approve'],
        envThrough(proxy),
      );
      expect(result.code, result.stdout + result.stderr).toBe(0);
      expect((await workspaceLock(name)).locked).toBe(false);
      // One unlock reached the service: the lost answer was read back, not answered by a second send.
      expect(proxy.creates).toBe(1);
    });
  },
);
