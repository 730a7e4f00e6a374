/**
 * The workspace service's stored records, its error type and id generation. Records hold what the
 * API shows plus what it derives from (the raw state of a state version, the lock holder); the JSON:API
 * rendering lives in `serialize.ts`.
 */
import { createHash, randomBytes } from 'node:crypto';

export type ExecutionMode = 'remote' | 'local' | 'agent';

export interface ProjectRecord {
  id: string;
  name: string;
  organization: string;
  createdAt: string;
}

export interface OrganizationRecord {
  name: string;
  createdAt: string;
  /** The first is always the default project. */
  projects: ProjectRecord[];
}

export interface VcsRepoRecord {
  branch: string;
  identifier: string;
  ingressSubmodules: boolean;
  oauthTokenId: string;
  tagsRegex: string | null;
  /** Random per repository link; rendered as an absolute URL on the sandbox. */
  webhookId: string;
}

/** Who holds a lock or created a state version. `users` also covers a team token's service user. */
export interface ActorRef {
  type: 'users' | 'teams';
  id: string;
  /** Username (users) or team name (teams), for `included` entries. */
  name: string;
}

export interface WorkspaceRecord {
  id: string;
  organization: string;
  projectId: string;
  name: string;
  description: string | null;
  agentPoolId: string | null;
  allowDestroyPlan: boolean;
  assessmentsEnabled: boolean;
  autoApply: boolean;
  executionMode: ExecutionMode;
  fileTriggersEnabled: boolean;
  globalRemoteState: boolean;
  queueAllRuns: boolean;
  sourceName: string | null;
  sourceUrl: string | null;
  speculativeEnabled: boolean;
  engineVersion: string;
  triggerPrefixes: string[];
  triggerPatterns: string[];
  tagNames: string[];
  vcsRepo: VcsRepoRecord | null;
  workingDirectory: string | null;
  lockedBy: ActorRef | null;
  lockReason: string | null;
  currentStateVersionId: string | null;
  resourceCount: number;
  createdAt: string;
  updatedAt: string;
  latestChangeAt: string;
}

export interface StateVersionRecord {
  id: string;
  workspaceId: string;
  serial: number;
  lineage: string | null;
  md5: string;
  /** The raw state file exactly as uploaded, base64 (bytes kept as sent for the download URL). */
  state: string;
  /** `json-state` as uploaded (base64), or null. */
  jsonState: string | null;
  /** `json-state-outputs` as uploaded (base64), or null. */
  jsonStateOutputs: string | null;
  runId: string | null;
  createdBy: ActorRef;
  createdAt: string;
  /** Secrets of the hosted download URLs (no bearer token needed, as the real archivist). */
  downloadSecret: string;
  jsonDownloadSecret: string | null;
  /** `wsout-…` ids of the outputs, by output name, fixed at upload. */
  outputIds: Record<string, string>;
}

/** A JSON:API error object's source pointer, e.g. `/data/attributes/name`. */
export interface ErrorSource {
  pointer: string;
}

/** An error answered as a JSON:API error document. */
export class WorkspacesError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail?: string,
    readonly source?: ErrorSource,
  ) {
    super(detail ?? title);
    this.name = 'WorkspacesError';
  }
}

export const notFound = (): WorkspacesError => new WorkspacesError(404, 'not found');
export const invalidAttribute = (pointer: string, detail: string): WorkspacesError =>
  new WorkspacesError(422, 'invalid attribute', detail, { pointer });
export const conflict = (detail: string): WorkspacesError => new WorkspacesError(409, 'conflict', detail);
export const badRequest = (detail: string): WorkspacesError =>
  new WorkspacesError(400, 'bad request', detail);

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `<prefix>-` + 16 random alphanumerics, the shape of the real ids (`ws-6jrRyVDv1J8zQMB5`). */
export function randomId(prefix: string): string {
  let out = '';
  while (out.length < 16) {
    for (const byte of randomBytes(24)) {
      // 248 = 4 * 62: rejecting above it keeps every character equally likely.
      if (byte < 248 && out.length < 16) out += ALPHABET[byte % 62];
    }
  }
  return `${prefix}-${out}`;
}

/**
 * A stable id of the same shape for things that live in the config, not in the saved state (users,
 * teams), so lock holders and state-version authors stay valid across restarts.
 */
export function stableId(prefix: string, key: string): string {
  const digest = createHash('sha256').update(key).digest();
  let out = '';
  for (let i = 0; out.length < 16; i++) out += ALPHABET[digest[i % digest.length]! % 62];
  return `${prefix}-${out}`;
}

/** A random secret for download URLs (the real ones are UUIDs). */
export function randomSecret(): string {
  return randomBytes(16).toString('hex');
}

/** ISO 8601 with milliseconds in UTC, as every timestamp of the real API. */
export function now(): string {
  return new Date().toISOString();
}
