/**
 * Create and update bodies of workspaces: decoding with type checks (each problem a 422 pointing at
 * the attribute), and merging into a record with the rules that involve several attributes
 * (execution mode vs operations vs agent pool, the VCS repository). Unknown attributes are ignored, as
 * the real service ignores them.
 */
import { isObject } from './jsonapi.js';
import {
  type ExecutionMode,
  invalidAttribute,
  randomSecret,
  type VcsRepoRecord,
  type WorkspaceRecord,
} from './model.js';

export const NAME_PATTERN = /^[A-Za-z0-9_-]+$/;
/** The real maximum length of a workspace name. */
export const NAME_MAX = 90;
/** Commas would make `search[tags]` ambiguous and blanks are never tags (UNCONFIRMED: the real rule). */
const TAG_PATTERN = /^[A-Za-z0-9][A-Za-z0-9:_.-]*$/;
const EXECUTION_MODES: readonly ExecutionMode[] = ['remote', 'local', 'agent'];

export interface VcsRepoInput {
  branch?: string;
  identifier?: string;
  ingressSubmodules?: boolean;
  oauthTokenId?: string;
  tagsRegex?: string | null;
}

/** What a body sets; a key is present only when the body sent it. */
export interface WorkspaceInput {
  name?: string;
  description?: string | null;
  agentPoolId?: string | null;
  allowDestroyPlan?: boolean;
  assessmentsEnabled?: boolean;
  autoApply?: boolean;
  executionMode?: ExecutionMode;
  operations?: boolean;
  fileTriggersEnabled?: boolean;
  globalRemoteState?: boolean;
  queueAllRuns?: boolean;
  sourceName?: string | null;
  sourceUrl?: string | null;
  speculativeEnabled?: boolean;
  engineVersion?: string;
  triggerPrefixes?: string[];
  triggerPatterns?: string[];
  tagNames?: string[];
  vcsRepo?: VcsRepoInput | null;
  workingDirectory?: string | null;
  /** `relationships.project.data.id`; blank means "no move" and is left out. */
  projectId?: string;
}

const attr = (name: string) => `/data/attributes/${name}`;

/** `Auto apply` from `auto-apply`: the real messages name attributes this way. */
function human(name: string): string {
  const words = name.replace(/[-_]/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

type Reader = {
  bool(name: string): boolean | undefined;
  str(name: string, opts?: { nullable?: boolean }): string | null | undefined;
  strings(name: string): string[] | undefined;
};

function reader(attrs: Record<string, unknown>, base: (name: string) => string): Reader {
  return {
    bool(name) {
      const v = attrs[name];
      if (v === undefined) return undefined;
      if (typeof v !== 'boolean') throw invalidAttribute(base(name), `${human(name)} must be true or false`);
      return v;
    },
    str(name, opts = {}) {
      const v = attrs[name];
      if (v === undefined) return undefined;
      if (v === null && opts.nullable) return null;
      if (typeof v !== 'string') throw invalidAttribute(base(name), `${human(name)} must be a string`);
      return v;
    },
    strings(name) {
      const v = attrs[name];
      if (v === undefined) return undefined;
      if (v === null) return [];
      if (!Array.isArray(v) || v.some((s) => typeof s !== 'string'))
        throw invalidAttribute(base(name), `${human(name)} must be a list of strings`);
      return [...(v as string[])];
    },
  };
}

/**
 * Decodes `{data:{type,attributes,relationships}}`. UNCONFIRMED: a missing or wrong `data.type` is a
 * 422 pointing at `/data/type` (JSON:API would say 409 for a mismatch; the real answer could not be checked).
 */
export function decodeWorkspaceBody(body: unknown): WorkspaceInput {
  if (!isObject(body) || !isObject(body.data))
    throw invalidAttribute('/data', 'The request body must be a JSON:API document with a data object');
  const data = body.data;
  if (data.type !== 'workspaces') throw invalidAttribute('/data/type', 'Type must be "workspaces"');
  const attrs = data.attributes ?? {};
  if (!isObject(attrs)) throw invalidAttribute('/data/attributes', 'Attributes must be an object');
  const r = reader(attrs, attr);
  const input: WorkspaceInput = {};
  const set = <K extends keyof WorkspaceInput>(key: K, value: WorkspaceInput[K] | undefined) => {
    if (value !== undefined) input[key] = value;
  };

  if (attrs.name !== undefined) {
    if (typeof attrs.name !== 'string') throw invalidAttribute(attr('name'), 'Name must be a string');
    input.name = attrs.name;
  }
  set('description', r.str('description', { nullable: true }));
  set('agentPoolId', r.str('agent-pool-id', { nullable: true }));
  set('allowDestroyPlan', r.bool('allow-destroy-plan'));
  set('assessmentsEnabled', r.bool('assessments-enabled'));
  set('autoApply', r.bool('auto-apply'));
  set('operations', r.bool('operations'));
  const mode = r.str('execution-mode');
  if (mode !== undefined) {
    if (!EXECUTION_MODES.includes(mode as ExecutionMode))
      throw invalidAttribute(attr('execution-mode'), 'Execution mode is not included in the list');
    input.executionMode = mode as ExecutionMode;
  }
  if (input.executionMode !== undefined && input.operations !== undefined) {
    throw invalidAttribute(
      attr('execution-mode'),
      'Execution mode and operations cannot both be specified; operations is deprecated, use execution-mode',
    );
  }
  set('fileTriggersEnabled', r.bool('file-triggers-enabled'));
  set('globalRemoteState', r.bool('global-remote-state'));
  set('queueAllRuns', r.bool('queue-all-runs'));
  set('sourceName', r.str('source-name', { nullable: true }));
  set('sourceUrl', r.str('source-url', { nullable: true }));
  set('speculativeEnabled', r.bool('speculative-enabled'));
  set('engineVersion', decodeEngineVersion(attrs));
  set('triggerPrefixes', r.strings('trigger-prefixes'));
  set('triggerPatterns', r.strings('trigger-patterns'));
  const tags = r.strings('tag-names');
  if (tags !== undefined) {
    for (const tag of tags) {
      if (!TAG_PATTERN.test(tag)) throw invalidAttribute(attr('tag-names'), `Tag name "${tag}" is invalid`);
    }
    input.tagNames = [...new Set(tags)];
  }
  const tagRelation = tagsFromRelationships(data.relationships);
  if (tagRelation !== undefined) input.tagNames = [...new Set([...(input.tagNames ?? []), ...tagRelation])];
  set('workingDirectory', r.str('working-directory', { nullable: true }));
  if (attrs['vcs-repo'] !== undefined) input.vcsRepo = decodeVcsRepo(attrs['vcs-repo']);

  const project = isObject(data.relationships) ? data.relationships.project : undefined;
  if (project !== undefined && project !== null) {
    const pdata = isObject(project) ? project.data : undefined;
    if (pdata !== null && pdata !== undefined) {
      if (!isObject(pdata) || (pdata.id !== undefined && pdata.id !== null && typeof pdata.id !== 'string'))
        throw invalidAttribute(
          '/data/relationships/project/data',
          'Project must be {"id", "type": "projects"}',
        );
      if (pdata.type !== undefined && pdata.type !== 'projects')
        throw invalidAttribute('/data/relationships/project/data/type', 'Type must be "projects"');
      const id = typeof pdata.id === 'string' ? pdata.id.trim() : '';
      if (id !== '') input.projectId = id;
    }
  }
  return input;
}

/**
 * go-tfe sends tags as a relationship: `relationships.tags.data: [{type: "tags", attributes: {name}}]`;
 * they add to `tag-names`.
 */
function tagsFromRelationships(relationships: unknown): string[] | undefined {
  if (!isObject(relationships) || !isObject(relationships.tags)) return undefined;
  const data = relationships.tags.data;
  if (!Array.isArray(data)) return undefined;
  return data.map((tag, i) => {
    const name = isObject(tag) && isObject(tag.attributes) ? tag.attributes.name : undefined;
    if (typeof name !== 'string' || !TAG_PATTERN.test(name))
      throw invalidAttribute(`/data/relationships/tags/data/${i}/attributes/name`, 'Tag name is invalid');
    return name;
  });
}

/**
 * `engine-version`, or the real product's `terraform-version` (go-tfe sends that one). The spec's
 * samples also show `engine_version`: accepted as well (UNCONFIRMED whether the real one does), and
 * the kebab-case spelling wins when several are sent.
 */
function decodeEngineVersion(attrs: Record<string, unknown>): string | undefined {
  for (const key of ['engine-version', 'terraform-version', 'engine_version', 'terraform_version']) {
    const v = attrs[key];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string' || !/^[0-9A-Za-z.+\-~<>=!, ]+$/.test(v) || !/\d|^latest$/.test(v.trim()))
      throw invalidAttribute(attr(key), `${human(key)} is invalid`);
    return v.trim();
  }
  return undefined;
}

function decodeVcsRepo(value: unknown): VcsRepoInput | null {
  if (value === null) return null;
  if (!isObject(value)) throw invalidAttribute(attr('vcs-repo'), 'VCS repo must be an object or null');
  const base = (name: string) => `${attr('vcs-repo')}/${name}`;
  const r = reader(value, base);
  const out: VcsRepoInput = {};
  const branch = r.str('branch', { nullable: true });
  if (branch !== undefined) out.branch = branch ?? '';
  const identifier = r.str('identifier');
  if (identifier !== undefined && identifier !== null) out.identifier = identifier;
  const ingress = r.bool('ingress-submodules');
  if (ingress !== undefined) out.ingressSubmodules = ingress;
  const token = r.str('oauth-token-id');
  if (token !== undefined && token !== null) out.oauthTokenId = token;
  const tagsRegex = r.str('tags-regex', { nullable: true });
  if (tagsRegex !== undefined) {
    if (tagsRegex !== null) {
      try {
        new RegExp(tagsRegex);
      } catch {
        throw invalidAttribute(base('tags-regex'), 'Tags regex is not a valid regular expression');
      }
    }
    out.tagsRegex = tagsRegex === '' ? null : tagsRegex;
  }
  return out;
}

/** Name rules: letters, digits, `-`, `_`; at most 90 characters (uniqueness is the caller's check). */
export function checkName(name: string | undefined): string {
  if (name === undefined || name.trim() === '') throw invalidAttribute(attr('name'), "Name can't be blank");
  if (name.length > NAME_MAX)
    throw invalidAttribute(attr('name'), `Name is too long (maximum is ${NAME_MAX} characters)`);
  if (!NAME_PATTERN.test(name))
    throw invalidAttribute(attr('name'), 'Name is invalid: use only letters, numbers, -, and _');
  return name;
}

/**
 * Execution mode, operations and agent pool after the change: `operations` maps to `remote`/`local`;
 * mode `agent` needs a pool of the organization; any other mode must not name one (and drops the old).
 */
export function resolveExecution(
  current: { executionMode: ExecutionMode; agentPoolId: string | null } | undefined,
  input: WorkspaceInput,
  agentPools: ReadonlyMap<string, string>,
): { executionMode: ExecutionMode; agentPoolId: string | null } {
  let mode: ExecutionMode = input.executionMode ?? current?.executionMode ?? 'remote';
  if (input.operations !== undefined) mode = input.operations ? 'remote' : 'local';
  const sentPool = input.agentPoolId !== undefined && input.agentPoolId !== null && input.agentPoolId !== '';
  if (mode !== 'agent') {
    if (sentPool) {
      throw invalidAttribute(
        attr('agent-pool-id'),
        input.operations === true
          ? 'Agent pool must not be specified when operations is true'
          : `Agent pool must not be specified when execution mode is ${mode}`,
      );
    }
    return { executionMode: mode, agentPoolId: null };
  }
  const pool = sentPool ? input.agentPoolId! : input.agentPoolId === undefined ? current?.agentPoolId : null;
  if (!pool)
    throw invalidAttribute(
      attr('agent-pool-id'),
      'Agent pool must be specified when execution mode is agent',
    );
  if (!agentPools.has(pool))
    throw invalidAttribute(attr('agent-pool-id'), 'Agent pool not found in this organization');
  return { executionMode: 'agent', agentPoolId: pool };
}

/**
 * The repository after the change: `null` removes it; adding one needs `oauth-token-id` and
 * `identifier`; on an existing one only the sent members change.
 */
export function resolveVcsRepo(
  current: VcsRepoRecord | null,
  input: VcsRepoInput | null | undefined,
): VcsRepoRecord | null {
  if (input === undefined) return current;
  if (input === null) return null;
  if (!current) {
    if (!input.oauthTokenId)
      throw invalidAttribute(`${attr('vcs-repo')}/oauth-token-id`, "VCS repo oauth token id can't be blank");
    if (!input.identifier)
      throw invalidAttribute(`${attr('vcs-repo')}/identifier`, "VCS repo identifier can't be blank");
  }
  const identifier = input.identifier ?? current!.identifier;
  if (!/^[^/\s]+(\/[^/\s]+)+$/.test(identifier))
    throw invalidAttribute(`${attr('vcs-repo')}/identifier`, 'VCS repo identifier must look like :org/:repo');
  return {
    branch: input.branch ?? current?.branch ?? '',
    identifier,
    ingressSubmodules: input.ingressSubmodules ?? current?.ingressSubmodules ?? false,
    oauthTokenId: input.oauthTokenId ?? current!.oauthTokenId,
    tagsRegex: input.tagsRegex !== undefined ? input.tagsRegex : (current?.tagsRegex ?? null),
    webhookId: current?.webhookId ?? randomSecret(),
  };
}

/** The plain settings of a body over a record (or over the create defaults). */
export function applySettings(
  target: WorkspaceRecord,
  input: WorkspaceInput,
  opts: { creating: boolean },
): void {
  if (input.description !== undefined) target.description = input.description;
  if (input.allowDestroyPlan !== undefined) target.allowDestroyPlan = input.allowDestroyPlan;
  // The key table gives `assessments-enabled` the default false on update too (not "previous"): an
  // update that leaves it out turns assessments off.
  target.assessmentsEnabled = input.assessmentsEnabled ?? false;
  if (input.autoApply !== undefined) target.autoApply = input.autoApply;
  if (input.fileTriggersEnabled !== undefined) target.fileTriggersEnabled = input.fileTriggersEnabled;
  if (input.globalRemoteState !== undefined) target.globalRemoteState = input.globalRemoteState;
  if (input.queueAllRuns !== undefined) target.queueAllRuns = input.queueAllRuns;
  // Source name and URL are create-only in the key table ("not listed" for update).
  if (opts.creating) {
    if (input.sourceName !== undefined) target.sourceName = input.sourceName;
    if (input.sourceUrl !== undefined) target.sourceUrl = input.sourceUrl;
  }
  if (input.speculativeEnabled !== undefined) target.speculativeEnabled = input.speculativeEnabled;
  if (input.engineVersion !== undefined) target.engineVersion = input.engineVersion;
  if (input.triggerPrefixes !== undefined) target.triggerPrefixes = input.triggerPrefixes;
  if (input.triggerPatterns !== undefined) target.triggerPatterns = input.triggerPatterns;
  if (input.tagNames !== undefined) target.tagNames = input.tagNames;
  if (input.workingDirectory !== undefined)
    target.workingDirectory = input.workingDirectory === '' ? null : input.workingDirectory;
}
