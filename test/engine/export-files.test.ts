/**
 * writeExportFiles when a write fails midway (a full disk, say), after the check found nothing in the
 * way: the error says which files it had written, so none is taken for a whole export.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { ExportedObject } from '../../src/engine/export.js';
import { writeExportFiles } from '../../src/engine/export-files.js';
import { tempDir } from '../support/temp-dirs.js';

// The second file written fails as a full disk would; everything else is the real file system.
vi.mock('node:fs/promises', async (original) => {
  const real = await original<typeof import('node:fs/promises')>();
  let writes = 0;
  return {
    ...real,
    writeFile: (...args: Parameters<typeof real.writeFile>) =>
      ++writes === 2
        ? Promise.reject(Object.assign(new Error('no space left on device'), { code: 'ENOSPC' }))
        : real.writeFile(...args),
  };
});

function object(kind: string, name: string): ExportedObject {
  return { key: { kind, name }, namespaceField: 'namespace', spec: {}, placeholders: [] };
}

describe('writeExportFiles', () => {
  it('names the files it wrote before a write failed', async () => {
    const dir = path.join(tempDir('converge-export-files-'), 'out');
    const objects = [object('AclRole', 'a'), object('Job', 'b'), object('LdapGroup', 'c')];
    await expect(writeExportFiles(dir, objects, { settingNames: { exportDir: '-o' } })).rejects.toThrow(
      `cannot write ${path.join(dir, 'Job.yaml')}: ENOSPC; written before it, and incomplete as an export: ${path.join(dir, 'AclRole.yaml')}`,
    );
    expect(readdirSync(dir)).toEqual(['AclRole.yaml']);
  });
});
