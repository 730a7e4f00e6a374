// Generated validators are read one module per schema, when a document of the kind is first met.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { precompiledFolder } from '../../src/common/precompiled.js';
import { tempDir } from '../support/temp-dirs.js';

const KEY = `v${'a'.repeat(40)}`;

function folderWith(files: Record<string, string>): URL {
  const dir = tempDir('converge-precompiled-');
  for (const [name, source] of Object.entries(files)) writeFileSync(path.join(dir, name), source);
  return pathToFileURL(`${dir}/`);
}

describe('validators generated one module per schema', () => {
  it("finds a schema's validator in its own module, and none for a schema the build did not see", () => {
    const lookup = precompiledFolder(folderWith({ [`${KEY}.cjs`]: `exports.${KEY} = (d) => d === 1;` }));
    expect(lookup(KEY)?.(1)).toBe(true);
    expect(lookup(`v${'b'.repeat(40)}`)).toBeUndefined();
  });

  it('never reads a file outside the folder, whatever the key', () => {
    const dir = folderWith({ 'evil.cjs': 'throw new Error("loaded")' });
    const lookup = precompiledFolder(new URL('./sub/', dir));
    for (const key of ['../evil', '..%2fevil', '/etc/passwd', `${KEY}/../../evil`])
      expect(lookup(key)).toBeUndefined();
  });
});
