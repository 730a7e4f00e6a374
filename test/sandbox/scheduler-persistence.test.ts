/** The scheduler's state in a data folder: jobs, versions, evaluations, allocations and the index survive a restart. */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox } from '../../src/sandbox/index.js';
import { apiFor, tempDir } from './helpers.js';
import { getJson, type Json, jobSpec, register } from './scheduler-helpers.js';

let dir: ReturnType<typeof tempDir>;

beforeEach(() => {
  dir = tempDir('scheduler-data');
});

afterEach(() => {
  dir.remove();
});

const config = { scheduler: { namespaces: ['team-a'] } };

describe('scheduler persistence', () => {
  it('keeps jobs, versions, evaluations, allocations and the index across a restart', async () => {
    const first = await startSandbox({ dataDir: dir.path, config });
    const api1 = apiFor(first);
    await register(api1, jobSpec('kept', { web: 2 }));
    await register(api1, jobSpec('kept', { web: 3 }));
    await api1('PUT', '/v1/jobs?namespace=team-a', { body: { Job: jobSpec('other') } });
    await register(api1, jobSpec('gone'));
    await api1('DELETE', '/v1/job/gone?purge=true');
    const paths = [
      '/v1/job/kept',
      '/v1/job/kept/versions',
      '/v1/job/kept/allocations',
      '/v1/job/kept/evaluations',
      '/v1/job/kept/summary',
    ];
    const before = await Promise.all(paths.map((p) => getJson<unknown>(api1, p)));
    const lastIndex = Number((await api1('GET', '/v1/jobs')).headers.get('x-scheduler-index'));
    await first.close();

    const doc = JSON.parse(readFileSync(join(dir.path, 'scheduler.json'), 'utf8')) as {
      service: string;
      state: { index: number };
    };
    expect(doc.service).toBe('scheduler');

    const second = await startSandbox({ dataDir: dir.path, config });
    try {
      const api2 = apiFor(second);
      const after = await Promise.all(paths.map((p) => getJson<unknown>(api2, p)));
      expect(after).toEqual(before);
      expect((await getJson(api2, '/v1/job/other?namespace=team-a')).Namespace).toBe('team-a');
      expect((await api2('GET', '/v1/job/gone')).status).toBe(404);
      expect(Number((await api2('GET', '/v1/jobs')).headers.get('x-scheduler-index'))).toBe(lastIndex);
      const next = await register(api2, jobSpec('kept', { web: 1 }));
      expect(next.JobModifyIndex).toBeGreaterThan(doc.state.index);
      const job = await getJson<Json>(api2, '/v1/job/kept');
      expect(job.Version).toBe(2);
    } finally {
      await second.close();
    }
  });

  it('refuses a state file of the wrong shape', async () => {
    const first = await startSandbox({ dataDir: dir.path });
    await first.close();
    const file = join(dir.path, 'scheduler.json');
    const doc = JSON.parse(readFileSync(file, 'utf8')) as Json;
    writeFileSync(file, JSON.stringify({ ...doc, state: { jobs: 'nope' } }));
    await expect(startSandbox({ dataDir: dir.path })).rejects.toThrow(/scheduler/);
  });
});
