/** Small kinds and a temp-folder writer shared by the manifest tests. */
import fs from 'node:fs';
import path from 'node:path';
import { Type } from '@sinclair/typebox';
import { expect } from 'vitest';
import {
  type LoadManifestOptions,
  loadManifest,
  type Manifest,
  ManifestError,
  type ManifestKind,
  type ManifestService,
} from '../../src/manifest/index.js';
import { tempDir } from '../support/temp-dirs.js';

export const testRoleKind: ManifestKind = {
  kind: 'TestRole',
  service: 'registry',
  description: 'A role for tests.',
  effectiveNamespace: (key) => key.namespace ?? 'default',
  nameSchema: Type.String({
    pattern: '^[a-z][a-z0-9-]*$',
    maxLength: 32,
    description: 'lowercase letters, digits and dashes, starting with a letter',
  }),
  specSchema: Type.Object(
    {
      Description: Type.String(),
      Level: Type.Optional(Type.Integer({ default: 1, minimum: 0 })),
      Token: Type.Optional(Type.String()),
      Policies: Type.Optional(
        Type.Array(Type.Object({ Name: Type.String({ minLength: 1 }) }, { additionalProperties: false })),
      ),
      Mode: Type.Optional(Type.Union([Type.Literal('read'), Type.Literal('write')])),
    },
    { additionalProperties: false },
  ),
};

export const testJobKind: ManifestKind = {
  kind: 'TestJob',
  service: 'scheduler',
  description: 'A job for tests.',
  nameSchema: Type.String({ pattern: '^[a-z][a-z0-9-]*$' }),
  specSchema: Type.Object(
    { Datacenters: Type.Array(Type.String()), Payload: Type.Optional(Type.String()) },
    { additionalProperties: false },
  ),
};

export const testKinds: readonly ManifestKind[] = [testRoleKind, testJobKind];

/** A fresh temp folder holding `files` (relative path → contents). */
export function writeTree(files: Record<string, string | Buffer>): string {
  const dir = tempDir('converge-manifest-');
  for (const [relative, contents] of Object.entries(files)) {
    const file = path.join(dir, relative);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, contents);
  }
  return dir;
}

type Options = Partial<LoadManifestOptions>;

/** Services Connection documents may name in these tests; one with a setting of its own. */
export const testServices: readonly ManifestService[] = [
  { name: 'registry' },
  { name: 'scheduler' },
  { name: 'secrets' },
  { name: 'workspaces', settings: [{ key: 'organization', description: 'default organization' }] },
];

/** Loads `paths` relative to `dir` with the test kinds (errors then show relative paths). */
export function load(dir: string, paths: string[], options: Options = {}): Promise<Manifest> {
  return loadManifest(paths, { kinds: testKinds, services: testServices, env: {}, cwd: dir, ...options });
}

/** The printed error lines of a load that must fail. */
export async function loadErrors(dir: string, paths: string[], options: Options = {}): Promise<string[]> {
  try {
    await load(dir, paths, options);
  } catch (error) {
    expect(error).toBeInstanceOf(ManifestError);
    return (error as ManifestError).message.split('\n');
  }
  throw new Error('expected the manifest to be rejected');
}

/** A valid TestRole document, with `extra` lines appended under spec. */
export function role(name: string, extraSpec = ''): string {
  return `apiVersion: converge/v1\nkind: TestRole\nmetadata:\n  name: ${name}\nspec:\n  Description: role ${name}\n${extraSpec}`;
}
