/**
 * The Kubernetes example for the reconcile loop parses and keeps the properties its README promises:
 * one replica that is never rolled over another, probes on /metrics, tokens only from a Secret, a
 * Service for /metrics. (No image is built here: there is no docker in the test environment.)
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function load(file: string): Obj[] {
  const text = readFileSync(new URL(`../examples/kubernetes/${file}`, import.meta.url), 'utf8');
  const docs = parseAllDocuments(text);
  for (const d of docs) expect(d.errors, file).toEqual([]);
  return docs.map((d) => d.toJS() as Obj);
}

describe('examples/kubernetes', () => {
  const [deployment] = load('deployment.yaml');
  const [service] = load('service.yaml');
  const pod = deployment!.spec.template.spec as Obj;
  const converge = (pod.containers as Obj[]).find((c) => c.name === 'converge')!;

  it('runs one reconcile loop that a rollout never doubles', () => {
    expect(deployment!.kind).toBe('Deployment');
    expect(deployment!.spec.replicas).toBe(1);
    expect(deployment!.spec.strategy).toEqual({ type: 'Recreate' });
    expect(converge.args.slice(0, 1)).toEqual(['reconcile']);
    expect(converge.args).toContain('--interval');
    const listen = converge.args[converge.args.indexOf('--listen') + 1];
    expect(listen).toBe(':9464');
  });

  it('keeps its inventory in a workspace, whose lock keeps CI and laptops out of its cycles', () => {
    const inventory = (converge.env as Obj[]).find((e) => e.name === 'CONVERGE_INVENTORY');
    expect(inventory?.value).toMatch(/^workspace:[\w.-]+\/[\w.-]+$/);
  });

  it('probes whether the process answers (/metrics) on the port the loop listens on, never /healthz', () => {
    // /healthz fails while cycles fail (a broken manifest): a restart fixes nothing, and an unready
    // pod would drop out of the Service that Prometheus scrapes.
    for (const probe of [converge.livenessProbe, converge.readinessProbe]) {
      expect(probe.httpGet.path).toBe('/metrics');
      const port = converge.ports.find((p: Obj) => p.name === probe.httpGet.port);
      expect(port.containerPort).toBe(9464);
    }
  });

  it('takes every token and the state key from a Secret, never as a literal', () => {
    const secretLike = (converge.env as Obj[]).filter((e) => /TOKEN|KEY/.test(e.name));
    expect(secretLike.map((e) => e.name)).toEqual(
      expect.arrayContaining(['CONVERGE_REGISTRY_TOKEN', 'CONVERGE_STATE_KEY', 'CONVERGE_RECONCILE_TOKEN']),
    );
    for (const e of secretLike) {
      expect(e.value, e.name).toBeUndefined();
      expect(e.valueFrom.secretKeyRef.name, e.name).toBe('converge-tokens');
    }
  });

  it('runs as non-root and mounts the manifests read-only', () => {
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    expect(converge.securityContext.allowPrivilegeEscalation).toBe(false);
    const manifests = (converge.volumeMounts as Obj[]).find((m) => m.name === 'manifests');
    expect(manifests?.readOnly).toBe(true);
  });

  it('exposes /metrics through a Service that selects the pod', () => {
    expect(service!.kind).toBe('Service');
    expect(service!.spec.selector).toEqual(deployment!.spec.template.metadata.labels);
    expect(service!.spec.ports[0].targetPort).toBe('http-metrics');
    expect(service!.metadata.annotations['prometheus.io/path']).toBe('/metrics');
  });
});

describe('Dockerfile', () => {
  const text = readFileSync(new URL('../Dockerfile', import.meta.url), 'utf8');

  it('is multi-stage on node:20-slim, prunes dev dependencies, runs as non-root with converge as entrypoint', () => {
    expect(text.match(/^FROM node:20-slim/gm)).toHaveLength(2);
    expect(text).toMatch(/npm ci/);
    expect(text).toMatch(/npm prune --omit=dev/);
    expect(text).toMatch(/^USER (?!root|0\b)/m);
    expect(text).toMatch(/^ENTRYPOINT \["converge"\]/m);
    // Nothing secret is baked in: no token or key variable gets a value in the image.
    expect(text).not.toMatch(/^(ENV|ARG)[^\n]*(TOKEN|STATE_KEY)/m);
  });
});
