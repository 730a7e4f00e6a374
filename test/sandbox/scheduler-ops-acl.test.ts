/**
 * The capabilities the spec's endpoint table asks of deployments, scale, dispatch, periodic force,
 * revert and evaluate: each allowed with its capability and 403 "Permission denied" without it, in
 * the request's namespace.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import type { Capability } from '../../src/sandbox/services/scheduler/config.js';
import { type Api, apiFor } from './helpers.js';
import { type Json, jobSpec, register } from './scheduler-helpers.js';

let sandbox: RunningSandbox;
let api: Api;

const caps = (name: string, capabilities: Capability[], ns = 'default') => ({
  name,
  secret: `${name}-token`,
  scheduler: { namespaces: { [ns]: { capabilities } } },
});

beforeAll(async () => {
  sandbox = await startSandbox({
    config: {
      scheduler: { namespaces: ['team-a'], deploymentSeconds: 3600 },
      tokens: [
        caps('read', ['read-job']),
        caps('read-scaling', ['read-job-scaling']),
        caps('scale', ['scale-job']),
        caps('submit', ['submit-job']),
        caps('override', ['scale-job', 'policy-override']),
        caps('dispatch', ['dispatch-job']),
        caps('team-a-read', ['read-job'], 'team-a'),
        {
          name: 'scale-policy',
          secret: 'scale-policy-token',
          scheduler: { namespaces: { default: { policy: 'scale' } } },
        },
      ],
    },
  });
  api = apiFor(sandbox);
  const noDeploy = { Update: { MaxParallel: 0 } };
  await register(api, jobSpec('acl-svc', { web: 1 }, noDeploy));
  await register(api, jobSpec('acl-param', { w: 1 }, { Type: 'batch', ParameterizedJob: {} }));
  await register(
    api,
    jobSpec('acl-cron', { w: 1 }, { Type: 'batch', Periodic: { Enabled: true, Spec: '@daily' } }),
  );
  await register(api, jobSpec('acl-svc', { web: 2 }, noDeploy));
  const inTeam = await api('PUT', '/v1/jobs?namespace=team-a', {
    body: { Job: jobSpec('acl-team', { web: 1 }, noDeploy) },
  });
  expect(inTeam.status).toBe(200);
});

afterAll(async () => {
  await sandbox.close();
});

type Call = [method: string, path: string, body?: Json];
const CALLS: Record<string, Call> = {
  deployments: ['GET', '/v1/job/acl-svc/deployments'],
  deployment: ['GET', '/v1/job/acl-svc/deployment'],
  scaleStatus: ['GET', '/v1/job/acl-svc/scale'],
  scale: ['POST', '/v1/job/acl-svc/scale', { Target: { Group: 'web' }, Message: 'm' }],
  scaleOverride: [
    'POST',
    '/v1/job/acl-svc/scale',
    { Target: { Group: 'web' }, Message: 'm', PolicyOverride: true },
  ],
  dispatch: ['POST', '/v1/job/acl-param/dispatch', {}],
  force: ['POST', '/v1/job/acl-cron/periodic/force'],
  revert: ['POST', '/v1/job/acl-svc/revert', { JobID: 'acl-svc', JobVersion: 0 }],
  evaluate: ['POST', '/v1/job/acl-svc/evaluate', { JobID: 'acl-svc' }],
};

/** Which calls each token may make (the rest must be 403). */
const ALLOWED: Record<string, string[]> = {
  read: ['deployments', 'deployment', 'scaleStatus', 'evaluate'],
  'read-scaling': ['scaleStatus'],
  scale: ['scale'],
  'scale-policy': ['scaleStatus', 'scale'],
  submit: ['scale', 'force', 'revert'],
  override: ['scale', 'scaleOverride'],
  dispatch: ['dispatch', 'force'],
};

describe('capabilities of the job operations', () => {
  for (const [token, allowed] of Object.entries(ALLOWED)) {
    it(`${token}: allowed ${allowed.join(', ')}; every other call 403`, async () => {
      for (const [name, [method, path, body]] of Object.entries(CALLS)) {
        const res = await api(method, path, { token: `${token}-token`, body });
        const want = allowed.includes(name) ? 200 : 403;
        expect([token, name, res.status, res.status === 403 ? res.text : '']).toEqual([
          token,
          name,
          want,
          want === 403 ? 'Permission denied' : '',
        ]);
      }
    });
  }

  it('the anonymous token may do none of them', async () => {
    for (const [name, [method, path, body]] of Object.entries(CALLS)) {
      const res = await api(method, path, { token: null, body });
      expect([name, res.status]).toEqual([name, 403]);
    }
  });

  it('rights apply in the namespace the request names', async () => {
    const token = 'team-a-read-token';
    const inTeam = await api('GET', '/v1/job/acl-team/scale?namespace=team-a', { token });
    expect(inTeam.status).toBe(200);
    expect(inTeam.json<Json>().Namespace).toBe('team-a');
    const deployments = await api('GET', '/v1/job/acl-team/deployments?namespace=team-a', { token });
    expect(deployments.status).toBe(200);
    const inDefault = await api('GET', '/v1/job/acl-team/scale', { token });
    expect(inDefault.status).toBe(403);
    // The job lives in team-a only: the default namespace has no such job.
    const wrongNs = await api('GET', '/v1/job/acl-team/scale');
    expect([wrongNs.status, wrongNs.text]).toEqual([404, 'job not found']);
  });
});

describe('order of checks', () => {
  it('scale: a body the capability check never sees is refused first (400), the rest after it (403)', async () => {
    const token = 'read-token';
    const mismatch = await api('POST', '/v1/job/acl-svc/scale', {
      token,
      body: { Target: { Group: 'web', Job: 'other' } },
    });
    expect([mismatch.status, mismatch.text]).toEqual([400, 'job ID in payload did not match URL']);
    const noGroup = await api('POST', '/v1/job/acl-svc/scale', { token, body: { Count: -1 } });
    expect([noGroup.status, noGroup.text]).toEqual([403, 'Permission denied']);
  });
});
