/** Every runtime dependency is used: an unused one is install time and attack surface for nothing. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

describe('package.json', () => {
  it('lists only dependencies that src/ imports', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
    };
    const sources = sourceFiles(join(ROOT, 'src')).map((file) => readFileSync(file, 'utf8'));
    const imported = (name: string) =>
      sources.some(
        (text) =>
          text.includes(`from '${name}'`) ||
          text.includes(`from '${name}/`) ||
          // Loaded on use: a dynamic import, or require() for a CommonJS plugin.
          text.includes(`import('${name}')`) ||
          text.includes(`require('${name}')`),
      );
    const unused = Object.keys(pkg.dependencies ?? {}).filter((name) => !imported(name));
    expect(unused).toEqual([]);
  });
});
