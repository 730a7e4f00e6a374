/**
 * CONVERGE_RETRY_BUDGET: an operator's way to let a run retry more while services fail more than
 * usual (at 15% errors and 15% dropped connections no run got through on the default budget).
 */
import { describe, expect, it } from 'vitest';
import { HostRegistry } from '../../src/clients/http/host-registry.js';
import { retryBudgetFromEnv } from '../../src/engine/connections.js';
import { runCli } from '../support/run-cli.js';

/** Retries a host's budget allows after `requests` first attempts. */
function allowed(registry: HostRegistry, requests: number): number {
  const budget = registry.budget('http://127.0.0.1:1');
  for (let i = 0; i < requests; i++) budget.noteRequest('registry');
  let taken = 0;
  while (budget.tryTake() && taken < 10_000) taken++;
  return taken;
}

describe('CONVERGE_RETRY_BUDGET', () => {
  it('sets how many retries each request sent allows, on top of the floor of 10', () => {
    expect(allowed(new HostRegistry(), 40)).toBe(20);
    expect(allowed(new HostRegistry(retryBudgetFromEnv({ CONVERGE_RETRY_BUDGET: '2' })), 40)).toBe(90);
    expect(allowed(new HostRegistry(retryBudgetFromEnv({ CONVERGE_RETRY_BUDGET: '0' })), 40)).toBe(10);
    expect(retryBudgetFromEnv({ CONVERGE_RETRY_BUDGET: ' ' })).toBeUndefined();
  });

  it('refuses a value that is not a number from 0 to 5, naming the variable', async () => {
    for (const value of ['lots', '-1', '6', '1e3', 'Infinity']) {
      expect(() => retryBudgetFromEnv({ CONVERGE_RETRY_BUDGET: value })).toThrow(
        /CONVERGE_RETRY_BUDGET must be a number of retries per request sent, from 0 to 5/,
      );
    }
    const r = await runCli(['role', 'list'], {
      CONVERGE_REGISTRY_ADDR: 'http://127.0.0.1:1',
      CONVERGE_REGISTRY_TOKEN: 't',
      CONVERGE_RETRY_BUDGET: 'lots',
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('CONVERGE_RETRY_BUDGET must be a number');
  });
});
