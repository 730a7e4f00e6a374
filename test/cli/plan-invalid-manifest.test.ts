/**
 * `plan --json` and `plan --markdown` on a manifest that does not load: stdout still says why (a PR
 * comment workflow posts it), with each problem's file, line and column; exit code 1. A manifest
 * anyone may write cannot inject markdown or HTML through the problems it causes. A plan that stops
 * before it is made (a service refuses) prints the same shapes with the reason.
 */
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { type AddressInfo } from 'node:net';
import { createServer } from 'node:http';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';
import { renderJson } from '../../src/planner/render/json.js';
import { summarise } from '../../src/planner/types.js';

function invalidManifest(key = 'Descripton'): { dir: string; file: string } {
  const dir = tempDir('converge-invalid-');
  const file = path.join(dir, 'roles.yaml');
  writeFileSync(file, `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: r }\nspec:\n  ${key}: x\n`);
  return { dir, file };
}

function env(extra: Record<string, string> = {}): Record<string, string | undefined> {
  return {
    PATH: process.env.PATH,
    NO_COLOR: '1',
    CONVERGE_STATE_DIR: tempDir('converge-invalid-state-'),
    ...extra,
  };
}

describe('plan of an invalid manifest', () => {
  it('prints JSON with complete: false, no changes and the problems with file, line and column', async () => {
    const { dir, file } = invalidManifest();
    const r = await runCli(['plan', '-f', dir, '--json'], env());
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('the manifest has 1 problem');
    const doc = JSON.parse(r.stdout) as {
      complete: boolean;
      changes: unknown[];
      problems: Array<{ file: string; line: number; col: number; message: string }>;
    };
    expect(doc.complete).toBe(false);
    expect(doc.changes).toEqual([]);
    expect(doc.problems).toHaveLength(1);
    expect(doc.problems[0]).toMatchObject({ file, line: 5 });
    expect(doc.problems[0]?.message).toContain('Descripton');
    // The same shape as a plan that was made: a consumer reads every field either way.
    const made = JSON.parse(
      renderJson({ changes: [], summary: summarise([]), problems: [], requests: {} }, 'test'),
    ) as Record<string, unknown>;
    const shape = (o: Record<string, unknown>) => ({
      top: Object.keys(o).sort(),
      pruned: Object.keys(o.pruned as object).sort(),
    });
    expect(shape(doc as unknown as Record<string, unknown>)).toEqual(shape(made));
  });

  it('prints a "Manifest invalid" Markdown section, also to the GitHub step summary', async () => {
    const { dir } = invalidManifest();
    const summary = path.join(tempDir('converge-invalid-summary-'), 's.md');
    writeFileSync(summary, '');
    const r = await runCli(
      ['plan', '-f', dir, '--markdown'],
      env({ GITHUB_ACTIONS: 'true', GITHUB_STEP_SUMMARY: summary }),
    );
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('> **Manifest invalid: 1 problem; nothing was planned.**');
    expect(r.stdout).toMatch(/> - `[^`]*roles\.yaml:5:\d+` .*Descripton/);
    expect(readFileSync(summary, 'utf8')).toContain('Manifest invalid: 1 problem');
  });

  it('escapes what the manifest wrote into the Markdown', async () => {
    const { dir } = invalidManifest('"<img src=x onerror=alert(1)>|x"');
    const r = await runCli(['plan', '-f', dir, '--markdown'], env());
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('Manifest invalid');
    expect(r.stdout).not.toContain('<img');
    expect(r.stdout).toContain('&lt;img');
  });

  it('reports in one run what keying finds beside what the load found, each document once', async () => {
    const dir = tempDir('converge-invalid-all-');
    const file = path.join(dir, 'all.yaml');
    writeFileSync(
      file,
      [
        'apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: web }\nspec: { Description: "${env:NOT_EXPOSED}" }',
        'apiVersion: converge/v1\nkind: Workspace\nmetadata: { name: ws1 }\nspec: { description: x }',
        'apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: twice }\nspec: { Description: a }',
        'apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: twice }\nspec: { Description: b }',
      ].join('\n---\n'),
    );
    for (const command of ['validate', 'plan']) {
      const r = await runCli([command, '-f', dir], env());
      expect(r.code).toBe(1);
      const lines = r.stderr.split('\n').filter((l) => l.startsWith(file));
      // The variable (the load), the workspace's organization (keying), the duplicate once.
      expect(lines.map((l) => l.slice(file.length).replace(/: .*/, ''))).toEqual([':4:23', ':7:1', ':17:1']);
      expect(lines[1]).toContain('Workspace "ws1" names no organization');
      expect(lines[2]).toContain('declared twice');
    }
  });

  it('names the Connection, not the environment, for a workspace on a Connection with no organization', async () => {
    // CONVERGE_WORKSPACES_ORGANIZATION is the default connection's: it does not reach a Connection.
    const dir = tempDir('converge-invalid-conn-org-');
    const file = path.join(dir, 'ws.yaml');
    writeFileSync(
      file,
      [
        'apiVersion: converge/v1\nkind: Connection\nmetadata: { name: second }\nspec: { service: workspaces, address: "http://127.0.0.1:9" }',
        'apiVersion: converge/v1\nkind: Workspace\nmetadata: { name: ws1, connection: second }\nspec: { description: x }',
      ].join('\n---\n'),
    );
    const r = await runCli(['validate', '-f', dir], env({ CONVERGE_WORKSPACES_ORGANIZATION: 'acme' }));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `${file}:7:1: Workspace "ws1" names no organization: set metadata.namespace, or organization in the spec of Connection "second"`,
    );
    expect(r.stderr).not.toContain('CONVERGE_WORKSPACES_ORGANIZATION');
  });
});

describe('plan that cannot be made', () => {
  it('prints JSON and Markdown that say why, with no secret, when a service refuses', async () => {
    const token = 'tok-ec1f0c2b-secret';
    // A hostile or broken service that echoes the caller's token in its refusal.
    const server = createServer((req, res) => {
      res.writeHead(403, { 'Content-Type': 'text/plain' });
      res.end(
        `Permission denied for token ${String(req.headers['x-consul-token'] ?? req.headers.authorization)}`,
      );
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const { dir, file } = invalidManifest('Description');
      expect(readFileSync(file, 'utf8')).toContain('Description: x');
      const addr = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const summary = path.join(tempDir('converge-failed-summary-'), 's.md');
      writeFileSync(summary, '');
      const serviceEnv = env({
        CONVERGE_REGISTRY_ADDR: addr,
        CONVERGE_REGISTRY_TOKEN: token,
        GITHUB_ACTIONS: 'true',
        GITHUB_STEP_SUMMARY: summary,
      });

      const json = await runCli(['plan', '-f', dir, '--json'], serviceEnv);
      expect(json.code).toBe(1);
      expect(json.stderr).toContain('Error: registry: GET');
      const doc = JSON.parse(json.stdout) as { complete: boolean; changes: unknown[]; problems: unknown[] };
      expect(doc).toMatchObject({ complete: false, changes: [] });
      expect(doc.problems).toEqual([
        expect.objectContaining({ address: null, source: null, message: expect.stringContaining('403') }),
      ]);

      const markdown = await runCli(['plan', '-f', dir, '--markdown'], serviceEnv);
      expect(markdown.code).toBe(1);
      expect(markdown.stdout).toContain('> **The plan could not be made; nothing was planned.**');
      expect(markdown.stdout).toMatch(/> registry: GET .*403/);
      expect(readFileSync(summary, 'utf8')).toContain('The plan could not be made');
      for (const text of [json.stdout, json.stderr, markdown.stdout, readFileSync(summary, 'utf8')])
        expect(text).not.toContain(token);
    } finally {
      server.close();
    }
  });
});
