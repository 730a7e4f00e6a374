/**
 * The sandbox is behind one door: nothing outside `src/sandbox/` imports it statically (so commands
 * other than `converge sandbox` never load it), and its core, index, config and command name no
 * service outside comments (so a new service is a module and a line in `services/index.ts`).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SANDBOX_SERVICES } from '../../src/sandbox/services/index.js';

const SRC = join(import.meta.dirname, '..', '..', 'src');
const SANDBOX = join(SRC, 'sandbox');

function sourceFiles(path: string): string[] {
  if (!statSync(path).isDirectory()) return path.endsWith('.ts') ? [path] : [];
  return readdirSync(path).flatMap((name) => sourceFiles(join(path, name)));
}

/** The code of a file without its comment lines (doc comments may name services to explain). */
function codeLines(file: string): { line: number; text: string }[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .map((text, i) => ({ line: i + 1, text }))
    .filter(({ text }) => !/^\s*(\/\/|\/\*|\*)/.test(text));
}

describe('the sandbox door', () => {
  it('is imported only dynamically from outside src/sandbox/ (type-only imports erase)', () => {
    // A whole statement, over several lines if need be: `import {` … `} from '../sandbox/x.js'`.
    const staticImport = /^(?:import|export)(?!\s+type\b)[^;]*?\sfrom\s+'[^']*\/sandbox\/[^']*'/gm;
    const offenders = sourceFiles(SRC)
      .filter((file) => !file.startsWith(`${SANDBOX}/`))
      .flatMap((file) =>
        [...readFileSync(file, 'utf8').matchAll(staticImport)].map((m) => `${relative(SRC, file)}: ${m[0]}`),
      );
    expect(offenders).toEqual([]);
  });

  it('leaves core/, config/, index.ts and command.ts service-blind', () => {
    const names = SANDBOX_SERVICES.map((s) => s.name);
    const pattern = new RegExp(`\\b(${names.join('|')})\\b`, 'i');
    const files = ['core', 'config', 'index.ts', 'command.ts'].flatMap((p) => sourceFiles(join(SANDBOX, p)));
    const offenders = files.flatMap((file) =>
      codeLines(file)
        .filter(({ text }) => pattern.test(text))
        .map(({ line, text }) => `${relative(SRC, file)}:${line}: ${text.trim()}`),
    );
    expect(offenders).toEqual([]);
  });
});
