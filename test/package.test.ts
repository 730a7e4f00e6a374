/** What package.json promises must exist once `npm run build` ran (the test script builds first). */
import { existsSync, readFileSync } from 'node:fs';
import { expect, test } from 'vitest';

const root = new URL('../', import.meta.url);
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as {
  main: string;
  types: string;
  exports: Record<string, string>;
  bin: Record<string, string>;
};

test('main, types, exports and bin point at files the build produces', async () => {
  for (const file of [pkg.main, pkg.types, ...Object.values(pkg.exports), ...Object.values(pkg.bin)]) {
    expect(existsSync(new URL(file, root)), `${file} is missing`).toBe(true);
  }
  const library = (await import(new URL(pkg.main, root).href)) as Record<string, unknown>;
  expect(typeof library.run).toBe('function');
  expect(typeof library.startSandbox).toBe('function');
});
