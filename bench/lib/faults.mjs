// The fault and rate-limit runs.
//
// The fault runs of issue 20: 10% 503s and 5% dropped connections (half after the service acted),
// and a 30 requests/s limit per token, each with a fixed seed so runs repeat.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { apply, connect, loadManifest, plan as planRun } from '../../dist/engine/index.js';
import { registryService } from '../../dist/clients/registry/definition.js';
import { startSandboxProcess } from './sandbox-process.mjs';
import { writeWorkload } from './workload.mjs';

export const faultConfig = ({ latencyMs }) => ({ latencyMs, failRate: 0.1, resetRate: 0.05, seed: 20 });
export const rateLimitConfig = ({ latencyMs }) => ({ latencyMs, rateLimit: 30, seed: 20 });

async function oneRun(faults, counts, parallelism) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'converge-bench-faults-'));
  // In its own process, as in the service phases: the rate is Converge's, not the sandbox's CPU.
  const sandbox = await startSandboxProcess({
    port: 0,
    config: { registry: { policies: [{ Name: 'service-read' }] }, faults },
  });
  const env = { ...process.env, ...sandbox.env(), CONVERGE_STATE_DIR: dir };
  try {
    const declared = writeWorkload(path.join(dir, 'manifest'), counts);
    const total = Object.values(declared).reduce((a, b) => a + b, 0);
    const manifest = await loadManifest([path.join(dir, 'manifest')], { env });
    const connections = connect(manifest, { env });
    try {
      const planned = await planRun(manifest, { env, parallelism, connections });
      const started = performance.now();
      const result = await apply({ plan: planned.plan, connections }, { parallelism });
      const wallMs = performance.now() - started;
      const after = await planRun(manifest, { env, parallelism });
      await after.connections.close();
      const roles = await connections.client(registryService).listRoles();
      const names = roles.map((r) => r.Name);
      return {
        objects: total,
        applied: result.counts.applied,
        failed: result.counts.failed,
        skipped: result.counts.skipped,
        wallMs,
        createsPerSecond: result.counts.applied / (wallMs / 1000),
        changesLeft: planned.plan.changes.length - after.plan.summary.noop,
        duplicateRoles: names.length - new Set(names).size,
        planAfter: after.plan.summary,
        // Why each failed change failed, so that a miss in docs/benchmarks.md says where to look.
        failures: result.results
          .filter((r) => r.status === 'failed')
          .map((r) => `${r.address}: ${r.message}`),
      };
    } finally {
      await connections.close();
    }
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  } finally {
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The issue's "500 objects of all kinds": the default sizes' mix (10:5:3:3:1), scaled to `total`. */
export function allKinds(total) {
  const share = { roles: 10, workspaces: 5, groups: 3, users: 3, jobs: 1 };
  const whole = Object.values(share).reduce((a, b) => a + b, 0);
  const counts = Object.fromEntries(
    Object.entries(share).map(([k, v]) => [k, Math.floor((total * v) / whole)]),
  );
  counts.roles += total - Object.values(counts).reduce((a, b) => a + b, 0);
  return counts;
}

/** 500 creates of every kind under 10% 5xx and 5% resets; roles under a 30 requests/s limit. */
export async function faultRuns({ latencyMs, parallelism, faultObjects, rateLimitObjects }) {
  const none = { groups: 0, users: 0, jobs: 0 };
  const faults = await oneRun(faultConfig({ latencyMs }), allKinds(faultObjects), parallelism);
  const limited = await oneRun(
    rateLimitConfig({ latencyMs }),
    { roles: rateLimitObjects, workspaces: 0, ...none },
    parallelism,
  );
  return { faults, rateLimit: { ...limited, limitPerSecond: 30 } };
}
