/**
 * State version endpoints: create (the workspace locked by the caller), list by workspace and
 * organization name, show, the workspace's current one, single outputs, and the hosted downloads,
 * which (as the real archivist URLs) need no token: the URL's random secret is the credential.
 */
import type { SandboxRequest, SandboxResponse } from '../../core/http.js';
import type { Access } from './access.js';
import { includesOf, STATE_VERSION_INCLUDES } from './include.js';
import { baseUrlOf, jsonApi, readJson } from './jsonapi.js';
import {
  conflict,
  notFound,
  now,
  randomId,
  randomSecret,
  type StateVersionRecord,
  type WorkspaceRecord,
} from './model.js';
import { paginate } from './pagination.js';
import { atLeastState, type Caller, creatorIdentity, lockIdentity } from './permissions.js';
import { actorJson, type Resource, stateVersionJson, stateVersionOutputsJson } from './serialize.js';
import { checkPreconditions, decodeStateVersionBody } from './state-input.js';
import { decodeBase64, deriveState } from './state-file.js';

export class StateHandlers {
  constructor(private readonly access: Access) {}

  private get store() {
    return this.access.store;
  }

  /**
   * Order of checks: token 401; workspace and the write right 404 (organization tokens: 404, as the
   * real service answers them on endpoints they may not use; UNCONFIRMED for this one); body 400/422;
   * lock 409; request vs state 412; history 409 (unless `force`).
   */
  async create(req: SandboxRequest): Promise<SandboxResponse> {
    const caller = this.access.caller(req);
    this.workspaceFor(caller, this.store.workspace(req.params.id!), 'write');
    const creator = creatorIdentity(caller);
    const holder = lockIdentity(caller);
    if (caller.kind === 'organization' || !creator || !holder) throw notFound();
    const body = await readJson(req);
    // Looked up again once the (possibly large) body has arrived: the lock may have been released or
    // the workspace deleted meanwhile, and the checks below must see that.
    const ws = this.workspaceFor(caller, this.store.workspace(req.params.id!), 'write');
    const input = decodeStateVersionBody(body);

    if (!ws.lockedBy)
      throw conflict('This workspace is not locked and will only accept state uploads when locked');
    if (ws.lockedBy.type !== holder.type || ws.lockedBy.id !== holder.id) {
      const kind = ws.lockedBy.type === 'teams' ? 'Team' : 'User';
      throw conflict(
        `This workspace is locked by ${kind} ${ws.lockedBy.id} and will only accept state uploads from the lock holder`,
      );
    }
    checkPreconditions(input);
    const current = ws.currentStateVersionId ? this.store.stateVersion(ws.currentStateVersionId) : undefined;
    if (current && !input.force) {
      const lineage = input.state.lineage;
      if (lineage !== null && current.lineage !== null && lineage !== current.lineage) {
        throw conflict(
          `The state's lineage ${lineage} differs from the current state's lineage ${current.lineage}; send force to replace it`,
        );
      }
      if (input.state.serial <= current.serial) {
        throw conflict(
          `The state's serial ${input.state.serial} must be greater than the current state's serial ${current.serial}; send force to replace it`,
        );
      }
    }

    const outputIds: Record<string, string> = {};
    for (const name of Object.keys(input.state.outputs)) outputIds[name] = randomId('wsout');
    const sv: StateVersionRecord = {
      id: randomId('sv'),
      workspaceId: ws.id,
      serial: input.state.serial,
      lineage: input.state.lineage ?? input.lineage,
      md5: input.md5,
      state: input.bytes.toString('base64'),
      jsonState: input.jsonStateB64,
      jsonStateOutputs: input.jsonStateOutputsB64,
      runId: input.runId,
      createdBy: creator,
      createdAt: now(),
      downloadSecret: randomSecret(),
      jsonDownloadSecret: input.jsonStateB64 ? randomSecret() : null,
      outputIds,
    };
    this.store.addStateVersion(sv);
    ws.currentStateVersionId = sv.id;
    ws.resourceCount = deriveState(input.state).resourceCount;
    ws.latestChangeAt = sv.createdAt;
    this.store.putWorkspace(ws);
    return jsonApi(201, { data: stateVersionJson(sv, baseUrlOf(req)) });
  }

  /**
   * `GET /state-versions?filter[workspace][name]=&filter[organization][name]=`, newest first.
   * UNCONFIRMED: a missing filter is a 404 (no such workspace), like an unknown name.
   */
  list(req: SandboxRequest): SandboxResponse {
    const caller = this.access.caller(req);
    const includes = includesOf(req, STATE_VERSION_INCLUDES);
    const orgName = req.query.get('filter[organization][name]') ?? '';
    const wsName = req.query.get('filter[workspace][name]') ?? '';
    if (orgName === '' || wsName === '') throw notFound();
    const org = this.access.organization(caller, orgName);
    const ws = this.workspaceFor(caller, this.store.workspaceByName(org, wsName), 'read');
    const page = paginate(req, baseUrlOf(req), this.store.stateVersionsOf(ws.id));
    const included = new Map<string, Resource>();
    for (const sv of page.items) {
      for (const r of this.included(sv, includes)) included.set(`${r.type}/${r.id}`, r);
    }
    return jsonApi(200, {
      data: page.items.map((sv) => stateVersionJson(sv, baseUrlOf(req))),
      ...(includes.size > 0 ? { included: [...included.values()] } : {}),
      links: page.links,
      meta: page.meta,
    });
  }

  show(req: SandboxRequest): SandboxResponse {
    const caller = this.access.caller(req);
    const includes = includesOf(req, STATE_VERSION_INCLUDES);
    const sv = this.store.stateVersion(req.params.id!);
    if (!sv) throw notFound();
    this.workspaceFor(caller, this.store.workspace(sv.workspaceId), 'read');
    return this.document(req, sv, includes);
  }

  current(req: SandboxRequest): SandboxResponse {
    const caller = this.access.caller(req);
    const includes = includesOf(req, STATE_VERSION_INCLUDES);
    const ws = this.workspaceFor(caller, this.store.workspace(req.params.id!), 'read');
    const sv = ws.currentStateVersionId ? this.store.stateVersion(ws.currentStateVersionId) : undefined;
    if (!sv) throw notFound();
    return this.document(req, sv, includes);
  }

  /** `GET /state-version-outputs/:id` (the id of one output of a state version). */
  output(req: SandboxRequest): SandboxResponse {
    const caller = this.access.caller(req);
    const id = req.params.id!;
    const sv = this.store.stateVersionWithOutput(id);
    if (!sv) throw notFound();
    this.workspaceFor(caller, this.store.workspace(sv.workspaceId), 'read-outputs');
    const output = stateVersionOutputsJson(sv).find((o) => o.id === id);
    if (!output) throw notFound();
    return jsonApi(200, { data: output });
  }

  /** The hosted download: the raw state, or the JSON state, exactly as uploaded; no token needed. */
  download(req: SandboxRequest): SandboxResponse {
    const found = this.store.download(req.params.secret!);
    if (!found) throw notFound();
    const b64 = found.json ? found.sv.jsonState : found.sv.state;
    const bytes = b64 === null ? undefined : decodeBase64(b64);
    if (!bytes) throw notFound();
    return { status: 200, headers: { 'Content-Type': 'application/json' }, body: new Uint8Array(bytes) };
  }

  private document(req: SandboxRequest, sv: StateVersionRecord, includes: Set<string>): SandboxResponse {
    const data = stateVersionJson(sv, baseUrlOf(req));
    return jsonApi(200, includes.size > 0 ? { data, included: this.included(sv, includes) } : { data });
  }

  /** `created_by` and `outputs` exist in the sandbox; runs do not, so run includes add nothing. */
  private included(sv: StateVersionRecord, includes: Set<string>): Resource[] {
    const out: Resource[] = [];
    if (includes.has('created_by')) out.push(actorJson(sv.createdBy));
    if (includes.has('outputs')) out.push(...stateVersionOutputsJson(sv));
    return out;
  }

  /** The workspace if the caller holds the state-version right at `level`; else 404. */
  private workspaceFor(
    caller: Caller,
    ws: WorkspaceRecord | undefined,
    level: 'read-outputs' | 'read' | 'write',
  ): WorkspaceRecord {
    if (!ws) throw notFound();
    if (!atLeastState(this.access.rights(caller, ws), level)) throw notFound();
    return ws;
  }
}
