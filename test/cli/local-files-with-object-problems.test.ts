/**
 * The files objects name (a job's `specFile`, a workspace's `state`) are read and reported in the same
 * run as the manifest's object-level problems: a connection that is not declared, an object declared
 * twice (found by the load, or by keying when one document names the default namespace and the other
 * leaves it out), a workspace with no organization. Those used to drop the file problems, which then
 * showed only once the other problem was fixed (found by a new-user trial). `validate` and `plan`
 * print the same lines, each once, in file order (line 4 before line 14, which the text of the
 * positions sorted the other way); `plan` writes nothing.
 */
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

function folder(files: Record<string, string>): string {
  const dir = tempDir('converge-local-files-');
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  return dir;
}

/** A document of four lines: `kind:` on its second, metadata on its third, spec on its fourth. */
const doc = (kind: string, metadata: string, spec: string) =>
  `apiVersion: converge/v1\nkind: ${kind}\nmetadata: { ${metadata} }\nspec: { ${spec} }\n`;

/** Documents one after another: the n-th (from 1) has `kind:` on line 5n - 3 and spec on line 5n - 1. */
const documents = (...docs: string[]) => docs.join('---\n');

/** A valid document between two others, so that the later one's problems are on lines 10 and over. */
const FILLER = doc('AclRole', 'name: filler', 'Description: x');

const NOT_DECLARED = (name: string, service: string) =>
  `connection "${name}" is not declared; add a Connection document with that name (no ${service} connection is declared)`;

/** The problem lines `validate` and `plan` print, after checking both refuse the manifest alike. */
async function problemLines(dir: string, more: Record<string, string> = {}): Promise<string[]> {
  const state = tempDir('converge-local-files-state-');
  const env = { PATH: process.env.PATH, NO_COLOR: '1', CONVERGE_STATE_DIR: state, ...more };
  const validated = await runCli(['validate', '-f', dir], env);
  expect(validated.code).toBe(1);
  expect(validated.stdout).toBe('');
  const out = path.join(state, 'saved.plan');
  const planned = await runCli(['plan', '-f', dir, '-out', out], env);
  expect(planned.code).toBe(1);
  // Refused before anything is read from a service or written: no plan, no inventory.
  expect(planned.stdout).toBe('');
  expect(existsSync(out)).toBe(false);
  expect(readdirSync(state)).toEqual([]);
  const lines = validated.stderr.trimEnd().split('\n');
  expect(planned.stderr.trimEnd().split('\n')).toEqual([
    ...lines,
    `Plan not saved to ${out}: the plan could not be made.`,
  ]);
  expect(lines[0]).toBe(`Error: the manifest has ${lines.length - 1} problems:`);
  return lines.slice(1);
}

describe('the files objects name, with the manifest object-level problems', () => {
  it('a connection that is not declared, then a job file that does not exist', async () => {
    const dir = folder({
      'jobs.yaml': documents(
        doc('Job', 'name: a, connection: nowhere', 'specFile: a.hcl'),
        FILLER,
        doc('Job', 'name: b', 'specFile: missing.hcl'),
      ),
      'a.hcl': 'job "a" {}\n',
    });
    const file = path.join(dir, 'jobs.yaml');
    expect(await problemLines(dir)).toEqual([
      `${file}:3:34: ${NOT_DECLARED('nowhere', 'scheduler')}`,
      `${file}:14:19: missing.hcl: no such file`,
    ]);
  });

  it('a JSON job file that is not a job, then a connection that is not declared', async () => {
    const dir = folder({
      'jobs.yaml': documents(
        doc('Job', 'name: b', 'specFile: b.json'),
        FILLER,
        doc('Job', 'name: a, connection: nowhere', 'specFile: a.hcl'),
      ),
      'a.hcl': 'job "a" {}\n',
      'b.json': '[1, 2]\n',
    });
    const file = path.join(dir, 'jobs.yaml');
    expect(await problemLines(dir)).toEqual([
      `${file}:4:19: b.json: expected a JSON object: the job, or {"Job": {...}}`,
      `${file}:13:34: ${NOT_DECLARED('nowhere', 'scheduler')}`,
    ]);
  });

  it('the files of the objects on a connection that is not declared are read too', async () => {
    const dir = folder({
      'objects.yaml': documents(
        doc('Job', 'name: a, connection: nowhere', 'specFile: a.json'),
        doc('Workspace', 'name: w, connection: elsewhere', 'state: w.tfstate'),
        doc('Job', 'name: c, connection: nowhere', 'specFile: c.json'),
      ),
      // The job's namespace is its kind's default whatever its connection: not said to differ.
      'a.json': '{"Job": {"ID": "a", "Namespace": "default"}}\n',
      'c.json': '{"ID": "other"}\n',
    });
    const file = path.join(dir, 'objects.yaml');
    expect(await problemLines(dir)).toEqual([
      `${file}:3:34: ${NOT_DECLARED('nowhere', 'scheduler')}`,
      `${file}:8:34: ${NOT_DECLARED('elsewhere', 'workspaces')}`,
      `${file}:9:16: cannot read state file w.tfstate: no such file`,
      `${file}:13:34: ${NOT_DECLARED('nowhere', 'scheduler')}`,
      `${file}:14:19: c.json says ID "other", but metadata.name is "c"`,
    ]);
  });

  it('an object declared twice, then a workspace state file that is not valid', async () => {
    const dir = folder({
      'ws.yaml': documents(
        doc('Workspace', 'name: w, namespace: acme', 'description: x'),
        doc('Workspace', 'name: w, namespace: acme', 'description: y'),
        doc('Workspace', 'name: v, namespace: acme', 'state: v.tfstate'),
      ),
      'v.tfstate': '{"version": 3}\n',
    });
    const file = path.join(dir, 'ws.yaml');
    expect(await problemLines(dir)).toEqual([
      `${file}:7:1: Workspace/acme/w is declared twice: at ${file}:2:1 and at ${file}:7:1`,
      `${file}:14:16: v.tfstate: state format version 3 is not supported; only version 4 (written by the engine 0.12 and later) can be pushed`,
    ]);
  });

  it('a workspace state file that does not exist, then an object declared twice', async () => {
    const dir = folder({
      'ws.yaml': documents(
        doc('Workspace', 'name: v, namespace: acme', 'state: missing.tfstate'),
        doc('Workspace', 'name: w, namespace: acme', 'description: x'),
        doc('Workspace', 'name: w, namespace: acme', 'description: y'),
      ),
    });
    const file = path.join(dir, 'ws.yaml');
    expect(await problemLines(dir)).toEqual([
      `${file}:4:16: cannot read state file missing.tfstate: no such file`,
      `${file}:12:1: Workspace/acme/w is declared twice: at ${file}:7:1 and at ${file}:12:1`,
    ]);
  });

  it('each declaration of an object declared twice has its file read, at its own line', async () => {
    const dir = folder({
      'ws.yaml': documents(
        doc('Workspace', 'name: w, namespace: acme', 'state: one.tfstate'),
        FILLER,
        doc('Workspace', 'name: w, namespace: acme', 'state: two.tfstate'),
      ),
    });
    const file = path.join(dir, 'ws.yaml');
    expect(await problemLines(dir)).toEqual([
      `${file}:4:16: cannot read state file one.tfstate: no such file`,
      `${file}:12:1: Workspace/acme/w is declared twice: at ${file}:2:1 and at ${file}:12:1`,
      `${file}:14:16: cannot read state file two.tfstate: no such file`,
    ]);
  });

  it('a job declared twice, once with the default namespace and once without, with its job files', async () => {
    // The load takes both (they spell their namespaces differently): keying finds them one object.
    const dir = folder({
      'jobs.yaml': documents(
        doc('Job', 'name: a', 'specFile: one.hcl'),
        doc('Job', 'name: a, namespace: default', 'specFile: two.hcl'),
        doc('Job', 'name: b', 'specFile: three.hcl'),
      ),
    });
    const file = path.join(dir, 'jobs.yaml');
    expect(await problemLines(dir)).toEqual([
      `${file}:4:19: one.hcl: no such file`,
      `${file}:7:1: Job/default/a is declared twice: at ${file}:2:1 and here (one names the default namespace, the other leaves it out)`,
      `${file}:9:19: two.hcl: no such file`,
      `${file}:14:19: three.hcl: no such file`,
    ]);
  });

  it("a Connection's address the operator did not allow, then its job's file that does not exist", async () => {
    const dir = folder({
      'jobs.yaml': documents(
        doc(
          'Connection',
          'name: other',
          'service: scheduler, address: "http://198.51.100.7:4646", token: "${env:OTHER_TOKEN}"',
        ),
        FILLER,
        doc('Job', 'name: b, connection: other', 'specFile: missing.hcl'),
      ),
    });
    const file = path.join(dir, 'jobs.yaml');
    const lines = await problemLines(dir, {
      OTHER_TOKEN: 'token-from-outside',
      CONVERGE_ALLOW_ENV: 'OTHER_TOKEN',
    });
    expect(lines).toHaveLength(2);
    // Then the addresses it may be allowed by (the message is the address check's own).
    const refused = `${file}:4:38: connection "other" takes its token from outside the manifest and would send it to http://198.51.100.7:4646, an address the operator has not allowed.`;
    expect(lines[0]?.startsWith(refused), lines[0]).toBe(true);
    expect(lines[1]).toBe(`${file}:14:19: missing.hcl: no such file`);
  });

  it('a misspelt field, then a job file that does not exist: line 4 before line 14', async () => {
    const dir = folder({
      'objects.yaml': documents(
        doc('Workspace', 'name: w, namespace: acme', 'descripton: x'),
        FILLER,
        doc('Job', 'name: b', 'specFile: missing.hcl'),
      ),
    });
    const file = path.join(dir, 'objects.yaml');
    expect(await problemLines(dir)).toEqual([
      `${file}:4:9: unknown field "descripton" in spec; did you mean "description"?`,
      `${file}:14:19: missing.hcl: no such file`,
    ]);
  });

  it('a workspace with no organization, then a job file that does not exist', async () => {
    const dir = folder({
      'objects.yaml': documents(
        doc('Workspace', 'name: w', 'description: x'),
        FILLER,
        doc('Job', 'name: b', 'specFile: missing.hcl'),
      ),
    });
    const file = path.join(dir, 'objects.yaml');
    expect(await problemLines(dir)).toEqual([
      `${file}:2:1: Workspace "w" names no organization: set metadata.namespace, or CONVERGE_WORKSPACES_ORGANIZATION`,
      `${file}:14:19: missing.hcl: no such file`,
    ]);
  });
});
