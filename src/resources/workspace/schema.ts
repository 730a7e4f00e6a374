/**
 * The Workspace manifest spec: the service's body keys (kebab-case, as the API names them) plus the
 * few things Converge adds: project by id or name, a declarative lock, a state file to seed, and how
 * the workspace is deleted.
 */
import { type Static, Type } from '@sinclair/typebox';

const VcsRepo = Type.Object(
  {
    identifier: Type.String({
      minLength: 1,
      description: ':org/:repo (one provider: :org/:project/_git/:repo)',
    }),
    'oauth-token-id': Type.String({ minLength: 1, description: 'the VCS connection id (ot-…)' }),
    branch: Type.Optional(Type.String({ description: 'default: the repository default branch' })),
    'ingress-submodules': Type.Optional(
      Type.Boolean({ description: 'fetch submodules on clone (default false)' }),
    ),
    'tags-regex': Type.Optional(
      Type.Union([Type.String(), Type.Null()], { description: 'a VCS tag matching this starts a run' }),
    ),
  },
  { additionalProperties: false },
);

const ProjectRef = Type.Union(
  [
    Type.Object(
      { id: Type.String({ pattern: '^prj-', description: 'project id (prj-…)' }) },
      { additionalProperties: false },
    ),
    Type.Object(
      { name: Type.String({ minLength: 1, description: 'project name' }) },
      { additionalProperties: false },
    ),
  ],
  { description: 'the project, by id or by name; default: the organization default project' },
);

export const WorkspaceSpec = Type.Object(
  {
    description: Type.Optional(Type.String()),
    'agent-pool-id': Type.Optional(
      Type.String({ minLength: 1, description: 'required with execution-mode agent' }),
    ),
    'allow-destroy-plan': Type.Optional(Type.Boolean({ description: 'default true' })),
    'assessments-enabled': Type.Optional(Type.Boolean({ description: 'health assessments; default false' })),
    'auto-apply': Type.Optional(Type.Boolean({ description: 'default false' })),
    'execution-mode': Type.Optional(
      Type.Union([Type.Literal('remote'), Type.Literal('local'), Type.Literal('agent')], {
        description: 'remote (default), local (state storage only) or agent; not together with operations',
      }),
    ),
    operations: Type.Optional(
      Type.Boolean({ description: 'deprecated alias of remote execution; not together with execution-mode' }),
    ),
    'file-triggers-enabled': Type.Optional(Type.Boolean({ description: 'default true' })),
    'global-remote-state': Type.Optional(Type.Boolean({ description: 'default false' })),
    'queue-all-runs': Type.Optional(Type.Boolean({ description: 'default false' })),
    'speculative-enabled': Type.Optional(Type.Boolean({ description: 'default true' })),
    'engine-version': Type.Optional(
      Type.String({ minLength: 1, description: 'exact version or constraint' }),
    ),
    'source-url': Type.Optional(
      Type.String({ description: 'URL shown as the creator (set on create only)' }),
    ),
    'trigger-patterns': Type.Optional(Type.Array(Type.String(), { description: 'default []' })),
    'trigger-prefixes': Type.Optional(Type.Array(Type.String(), { description: 'default []' })),
    'tag-names': Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), { description: 'order does not matter' }),
    ),
    'vcs-repo': Type.Optional(
      Type.Union([VcsRepo, Type.Null()], { description: 'the linked repository; null removes it' }),
    ),
    'working-directory': Type.Optional(Type.String()),
    project: Type.Optional(ProjectRef),
    locked: Type.Optional(
      Type.Boolean({
        description:
          'true: keep the workspace locked (Converge locks it); false: keep it unlocked (a lock held by someone else is released only with --force-unlock)',
      }),
    ),
    'lock-reason': Type.Optional(Type.String({ description: 'the reason given when Converge locks it' })),
    state: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          'a state file (relative to this manifest) to push when the workspace has no state, or the same lineage with a newer serial',
      }),
    ),
    deletion: Type.Optional(
      Type.Union([Type.Literal('safe'), Type.Literal('force')], {
        description: 'how Converge deletes it: safe (default; refused while it manages resources) or force',
      }),
    ),
  },
  { additionalProperties: false },
);
export type WorkspaceSpec = Static<typeof WorkspaceSpec>;

/** Spec keys that are Converge's, not the service's: never sent as attributes. */
export const CONVERGE_KEYS = ['project', 'locked', 'lock-reason', 'state', 'deletion'] as const;

/**
 * The service attributes a manifest may set (the spec's keys but Converge's own), in the spec's order:
 * what a Workspace compares, so what a plan's `before` shows of a live workspace.
 */
export const SERVICE_KEYS: readonly string[] = Object.keys(WorkspaceSpec.properties).filter(
  (k) => !(CONVERGE_KEYS as readonly string[]).includes(k),
);

/** Attributes the service fills with these values when a create omits them (the body key table). */
export const CREATE_DEFAULTS: Readonly<Record<string, unknown>> = {
  'allow-destroy-plan': true,
  'assessments-enabled': false,
  'auto-apply': false,
  'file-triggers-enabled': true,
  'global-remote-state': false,
  'queue-all-runs': false,
  'speculative-enabled': true,
  'trigger-patterns': [],
  'trigger-prefixes': [],
};

/** Attributes the service will not change after create (`source-*`: "not listed" for update). */
export const CREATE_ONLY = ['source-url'] as const;

/** Manifest rules the schema cannot say well. */
export function workspaceRules(spec: WorkspaceSpec): { pointer: string; message: string }[] {
  const rules: { pointer: string; message: string }[] = [];
  if (spec['execution-mode'] !== undefined && spec.operations !== undefined) {
    rules.push({
      pointer: '/operations',
      message: 'operations must not be set together with execution-mode (operations is its deprecated alias)',
    });
  }
  if (spec['execution-mode'] === 'agent' && spec['agent-pool-id'] === undefined) {
    rules.push({ pointer: '/execution-mode', message: 'execution-mode agent needs agent-pool-id' });
  }
  if (spec['agent-pool-id'] !== undefined && spec['execution-mode'] !== 'agent') {
    rules.push({
      pointer: '/agent-pool-id',
      message: 'agent-pool-id is only allowed with execution-mode agent',
    });
  }
  if (spec['lock-reason'] !== undefined && spec.locked !== true) {
    rules.push({ pointer: '/lock-reason', message: 'lock-reason needs locked: true' });
  }
  // The service keeps a tag once: a tag listed twice would plan as a change after every apply.
  const seen = new Set<string>();
  (spec['tag-names'] ?? []).forEach((tag, i) => {
    if (seen.has(tag))
      rules.push({
        pointer: `/tag-names/${i}`,
        message: 'this tag is listed twice; the service keeps it once',
      });
    seen.add(tag);
  });
  return rules;
}
