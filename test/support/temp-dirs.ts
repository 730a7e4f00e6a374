/**
 * Temporary folders for a test file (manifests, state folders), removed once its tests are done:
 * `mkdtempSync` alone left tens of thousands of `/tmp/converge-*` folders behind. Importing this
 * module registers the file's `afterAll`, so a test file (or a helper it imports) only swaps
 * `mkdtempSync(path.join(os.tmpdir(), prefix))` for `tempDir(prefix)`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';

const made: string[] = [];

/** A new empty folder under the system's temporary folder, its name starting with `prefix`. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** Removes every folder `tempDir` made so far (also called by hand where a test needs it early). */
export function removeTempDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

afterAll(removeTempDirs);
