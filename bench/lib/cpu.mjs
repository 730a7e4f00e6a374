// CPU and peak memory of a warm plan of many roles against parsing the same file with `yaml` alone.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startSandbox } from '../../dist/sandbox/index.js';
import { seededRoles, writeRoles } from './workload.mjs';

const CHILD = fileURLToPath(new URL('./cpu-child.mjs', import.meta.url));
const run = promisify(execFile);

async function child(args, env) {
  const { stdout } = await run(process.execPath, [CHILD, ...args], {
    env,
    timeout: 300_000,
    maxBuffer: 1 << 20,
  });
  return JSON.parse(stdout.trim().split('\n').pop());
}

export async function measureCpu(roles) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'converge-bench-cpu-'));
  const file = writeRoles(path.join(dir, 'manifest'), roles);
  const sandbox = await startSandbox({
    port: 0,
    config: { registry: { policies: [{ Name: 'service-read' }], roles: seededRoles(roles) } },
  });
  try {
    const env = { PATH: process.env.PATH ?? '', ...sandbox.env(), CONVERGE_STATE_DIR: dir };
    const yaml = await child(['yaml', file], env);
    const plan = await child(['plan', path.dirname(file)], env);
    return { roles, yaml, plan };
  } finally {
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
