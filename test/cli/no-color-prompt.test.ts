/**
 * `--no-color` reaches the confirmation prompt on a real terminal. The prompt library colours by the
 * process's own terminal and environment alone, so this needs a process with a pseudo-terminal:
 * util-linux's `script` gives one (skipped, with the reason printed, where it is missing).
 */
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { tempDir } from '../support/temp-dirs.js';
import { CLI } from './helpers.js';

const hasScript = spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;
if (!hasScript) console.log('skipping the --no-color prompt test: `script` (util-linux) is not installed');

let sandbox: RunningSandbox;
beforeAll(async () => {
  if (hasScript) sandbox = await startSandbox({ port: 0 });
});
afterAll(async () => {
  await sandbox?.close();
});

/** Runs `apply` on a pseudo-terminal, answers no once asked, and returns everything the terminal showed. */
function applyOnTerminal(extra: string[]): Promise<string> {
  const dir = tempDir('converge-nocolor-');
  writeFileSync(
    path.join(dir, 'm.yaml'),
    'apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: nocolor }\nspec:\n  Description: x\n',
  );
  const command = [process.execPath, CLI, 'apply', '-f', dir, ...extra].map((a) => `'${a}'`).join(' ');
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', TERM: 'xterm-256color' };
  for (const [k, v] of Object.entries(sandbox.env())) env[k] = v;
  env.CONVERGE_STATE_DIR = tempDir('converge-nocolor-state-');
  const child = spawn('script', ['-qc', command, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'inherit'] });
  let shown = '';
  let answered = false;
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    shown += chunk;
    if (!answered && shown.includes('Apply these changes?')) {
      answered = true;
      child.stdin.write('n\r');
    }
  });
  return new Promise((resolve) => child.on('close', () => resolve(shown)));
}

const COLOUR = /\x1b\[3\dm/;

describe.skipIf(!hasScript)('the confirmation prompt on a terminal', () => {
  it('is coloured by default and plain with --no-color', async () => {
    const [plain, coloured] = await Promise.all([applyOnTerminal(['--no-color']), applyOnTerminal([])]);
    for (const shown of [plain, coloured]) expect(shown).toContain('Apply cancelled; nothing was changed.');
    expect(coloured).toMatch(COLOUR);
    expect(plain).not.toMatch(COLOUR);
  });
});
