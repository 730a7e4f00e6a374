/**
 * The scheduler's parts of the sandbox config: its section (`scheduler:` with namespaces besides
 * `default` and the simulated client nodes) and the rights a token holds in it, shaped like the real
 * scheduler's namespace ACL rules (`namespace "x" { policy = "read" capabilities = [...] }`).
 *
 * ```yaml
 * scheduler:
 *   namespaces: [team-a]                           # besides `default`, which always exists
 *   nodes:                                         # default: node-1..node-3 in dc1
 *     - { name: node-1, datacenter: dc1, cpu: 4000, memoryMB: 8192 }  # capacity defaults as shown
 *   deploymentSeconds: 10                          # how long a deployment runs before it succeeds
 * tokens:
 *   - name: deployer
 *     secret: deployer-token
 *     scheduler:
 *       namespaces:                                # by namespace name, or "*" for every namespace
 *         default: { policy: write }
 *         team-a: { policy: read, capabilities: [submit-job] }
 * ```
 */
import { type Static, Type } from '@sinclair/typebox';
import type { ServiceConfigIssue } from '../../core/service.js';

/** The namespace capabilities the spec's endpoint table names (the real product has more). */
export const CAPABILITIES = [
  'list-jobs',
  'read-job',
  'submit-job',
  'dispatch-job',
  'read-job-scaling',
  'scale-job',
  'policy-override',
] as const;
export type Capability = (typeof CAPABILITIES)[number];

export const POLICIES = ['deny', 'read', 'scale', 'write'] as const;
export type PolicyLevel = (typeof POLICIES)[number];

/**
 * What each `policy` expands to, as the real ACL (`acl/policy.go expandNamespacePolicy`) does for
 * these capabilities: write includes read and scale; `policy-override` is never implied.
 */
export const POLICY_CAPABILITIES: Record<PolicyLevel, readonly Capability[]> = {
  deny: [],
  read: ['list-jobs', 'read-job', 'read-job-scaling'],
  scale: ['read-job-scaling', 'scale-job'],
  write: ['list-jobs', 'read-job', 'read-job-scaling', 'scale-job', 'submit-job', 'dispatch-job'],
};

const NonEmpty = Type.String({ minLength: 1 });

export const NamespaceRuleSchema = Type.Object(
  {
    policy: Type.Optional(Type.Unsafe<PolicyLevel>({ type: 'string', enum: [...POLICIES] })),
    capabilities: Type.Optional(
      Type.Array(Type.Unsafe<Capability>({ type: 'string', enum: [...CAPABILITIES] })),
    ),
  },
  { additionalProperties: false },
);
export type NamespaceRule = Static<typeof NamespaceRuleSchema>;

export const SchedulerTokenRightsSchema = Type.Object(
  { namespaces: Type.Optional(Type.Record(Type.String(), NamespaceRuleSchema)) },
  { additionalProperties: false, description: 'namespace rules by name or "*"' },
);
export type SchedulerTokenRights = Static<typeof SchedulerTokenRightsSchema>;

export const NodeSeedSchema = Type.Object(
  {
    name: NonEmpty,
    datacenter: Type.Optional(NonEmpty),
    /** Allocatable CPU in MHz, which task `Resources.CPU` asks consume. */
    cpu: Type.Optional(Type.Integer({ minimum: 1 })),
    /** Allocatable memory in MB, which task `Resources.MemoryMB` asks consume. */
    memoryMB: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { additionalProperties: false },
);
export type NodeSeed = Static<typeof NodeSeedSchema>;

export const SchedulerConfigSchema = Type.Object(
  {
    namespaces: Type.Optional(Type.Array(NonEmpty)),
    nodes: Type.Optional(Type.Array(NodeSeedSchema)),
    /**
     * Seconds a deployment stays `running` before it completes (the real one waits for its allocations
     * to be healthy for `MinHealthyTime`, 10s by default, which is why that is the default here).
     */
    deploymentSeconds: Type.Optional(Type.Number({ minimum: 0 })),
  },
  { additionalProperties: false },
);
export type SchedulerConfig = Static<typeof SchedulerConfigSchema>;

export const DEFAULT_NAMESPACE = 'default';
/** A node's capacity when the config gives none: a modest real client's fingerprint. */
export const DEFAULT_NODE_CPU = 4000;
export const DEFAULT_NODE_MEMORY_MB = 8192;
export const DEFAULT_DEPLOYMENT_SECONDS = 10;
/** The real namespace name rule (`structs.Namespace.Validate`): alphanumerics, `_` and `-`, 1..128. */
const NAMESPACE_NAME_RE = /^[a-zA-Z0-9-_]{1,128}$/;

export function checkSchedulerConfig(section: SchedulerConfig): ServiceConfigIssue[] {
  const issues: ServiceConfigIssue[] = [];
  const seen = new Map<string, number>();
  section.namespaces?.forEach((ns, i) => {
    if (!NAMESPACE_NAME_RE.test(ns))
      issues.push({ path: ['namespaces', i], message: `invalid namespace name "${ns}"` });
    else if (ns === DEFAULT_NAMESPACE)
      issues.push({ path: ['namespaces', i], message: 'the default namespace always exists' });
    const earlier = seen.get(ns);
    if (earlier !== undefined)
      issues.push({ path: ['namespaces', i], message: `duplicate namespace (also namespaces[${earlier}])` });
    else seen.set(ns, i);
  });
  const names = new Map<string, number>();
  section.nodes?.forEach((node, i) => {
    const earlier = names.get(node.name);
    if (earlier !== undefined)
      issues.push({ path: ['nodes', i, 'name'], message: `duplicate node name (also nodes[${earlier}])` });
    else names.set(node.name, i);
  });
  if (section.nodes?.length === 0)
    issues.push({ path: ['nodes'], message: 'at least one node (or leave nodes out for the default three)' });
  return issues;
}

export function namespacesOf(section: SchedulerConfig | undefined): string[] {
  return [DEFAULT_NAMESPACE, ...(section?.namespaces ?? [])];
}

/** Rule keys must name a namespace of the section (or `*`), so a typo does not silently grant nothing. */
export function checkSchedulerTokenRights(
  rights: unknown,
  section: SchedulerConfig | undefined,
): ServiceConfigIssue[] {
  const known = new Set(namespacesOf(section));
  const issues: ServiceConfigIssue[] = [];
  for (const ns of Object.keys((rights as SchedulerTokenRights).namespaces ?? {})) {
    if (ns !== '*' && !known.has(ns))
      issues.push({
        path: ['namespaces', ns],
        message: `unknown namespace "${ns}" (known: ${[...known].join(', ')}, or "*")`,
      });
  }
  return issues;
}

/** The capabilities a token's rules grant in one namespace: its own rule, else the `*` rule. */
export function capabilitiesIn(rights: SchedulerTokenRights | undefined, namespace: string): Set<Capability> {
  const rule = rights?.namespaces?.[namespace] ?? rights?.namespaces?.['*'];
  const caps = new Set<Capability>(rule?.capabilities ?? []);
  if (rule?.policy) for (const c of POLICY_CAPABILITIES[rule.policy]) caps.add(c);
  if (rule?.policy === 'deny') caps.clear();
  return caps;
}

// The service's section and token rights in the typed sandbox config (`SandboxConfig`).
declare module '../../config/types.js' {
  interface SandboxServiceSections {
    /** Scheduler namespaces besides `default` and the simulated nodes. */
    scheduler?: SchedulerConfig;
  }
  interface SandboxServiceTokenRights {
    /** Namespace rules in the scheduler: `{ namespaces: { <ns>|"*": { policy, capabilities } } }`. */
    scheduler?: SchedulerTokenRights;
  }
}
