/**
 * The workspace service's state: organizations with their projects, workspaces and state versions.
 * Everything here is saved by the core's persistence; teams, tokens and rights are not (they come from
 * the config on every start).
 */
import { DEFAULT_PROJECT_NAME } from './config.js';
import {
  now,
  type OrganizationRecord,
  type ProjectRecord,
  randomId,
  type StateVersionRecord,
  type WorkspaceRecord,
} from './model.js';
import { hasFields } from '../shared/record-shape.js';
import { KeyedRecords } from '../shared/keyed-records.js';

export interface WorkspacesSnapshot {
  organizations: OrganizationRecord[];
  workspaces: WorkspaceRecord[];
  stateVersions: StateVersionRecord[];
}

export function isWorkspacesSnapshot(value: unknown): value is WorkspacesSnapshot {
  return hasFields(value, { organizations: 'array', workspaces: 'array', stateVersions: 'array' });
}

export class WorkspacesStore {
  private readonly organizations = new Map<string, OrganizationRecord>();
  private readonly workspaces = new KeyedRecords<WorkspaceRecord>(
    (ws) => ws.id,
    (ws) => [ws.organization, ws.name],
  );
  private readonly stateVersions = new Map<string, StateVersionRecord>();
  /** Download secret → state version id and which document it serves. */
  private readonly downloads = new Map<string, { id: string; json: boolean }>();

  constructor(private readonly onChange: () => void = () => {}) {}

  changed(): void {
    this.onChange();
  }

  // ---- organizations and projects ----

  organization(name: string): OrganizationRecord | undefined {
    return this.organizations.get(name);
  }

  /** Creates the organization (with its default project) if missing. */
  ensureOrganization(name: string): OrganizationRecord {
    let org = this.organizations.get(name);
    if (!org) {
      const createdAt = now();
      org = { name, createdAt, projects: [] };
      org.projects.push({ id: randomId('prj'), name: DEFAULT_PROJECT_NAME, organization: name, createdAt });
      this.organizations.set(name, org);
      this.changed();
    }
    return org;
  }

  ensureProject(organization: string, name: string): ProjectRecord {
    const org = this.ensureOrganization(organization);
    let project = org.projects.find((p) => p.name === name);
    if (!project) {
      project = { id: randomId('prj'), name, organization, createdAt: now() };
      org.projects.push(project);
      this.changed();
    }
    return project;
  }

  defaultProject(organization: string): ProjectRecord {
    return this.ensureOrganization(organization).projects[0]!;
  }

  project(id: string): ProjectRecord | undefined {
    for (const org of this.organizations.values()) {
      const found = org.projects.find((p) => p.id === id);
      if (found) return found;
    }
    return undefined;
  }

  // ---- workspaces ----

  workspace(id: string): WorkspaceRecord | undefined {
    return this.workspaces.get(id);
  }

  workspaceByName(organization: string, name: string): WorkspaceRecord | undefined {
    return this.workspaces.byName(organization, name);
  }

  /** The organization's workspaces sorted by name (UNCONFIRMED: the real list order). */
  workspacesOf(organization: string): WorkspaceRecord[] {
    return [...this.workspaces.values()]
      .filter((ws) => ws.organization === organization)
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  putWorkspace(ws: WorkspaceRecord): void {
    this.workspaces.set(ws);
    this.changed();
  }

  /** Removes the workspace and its state versions (their download URLs stop working too). */
  deleteWorkspace(id: string): void {
    this.workspaces.delete(id);
    for (const sv of [...this.stateVersions.values()]) {
      if (sv.workspaceId === id) this.removeStateVersion(sv);
    }
    this.changed();
  }

  // ---- state versions ----

  stateVersion(id: string): StateVersionRecord | undefined {
    return this.stateVersions.get(id);
  }

  /** Newest first (creation order; ids are random, so insertion order is kept). */
  stateVersionsOf(workspaceId: string): StateVersionRecord[] {
    return [...this.stateVersions.values()].filter((sv) => sv.workspaceId === workspaceId).reverse();
  }

  /** The state version one of whose outputs has this `wsout-…` id. */
  stateVersionWithOutput(outputId: string): StateVersionRecord | undefined {
    for (const sv of this.stateVersions.values()) {
      if (Object.values(sv.outputIds).includes(outputId)) return sv;
    }
    return undefined;
  }

  addStateVersion(sv: StateVersionRecord): void {
    this.stateVersions.set(sv.id, sv);
    this.downloads.set(sv.downloadSecret, { id: sv.id, json: false });
    if (sv.jsonDownloadSecret) this.downloads.set(sv.jsonDownloadSecret, { id: sv.id, json: true });
    this.changed();
  }

  download(secret: string): { sv: StateVersionRecord; json: boolean } | undefined {
    const entry = this.downloads.get(secret);
    const sv = entry && this.stateVersions.get(entry.id);
    return entry && sv ? { sv, json: entry.json } : undefined;
  }

  private removeStateVersion(sv: StateVersionRecord): void {
    this.stateVersions.delete(sv.id);
    this.downloads.delete(sv.downloadSecret);
    if (sv.jsonDownloadSecret) this.downloads.delete(sv.jsonDownloadSecret);
  }

  // ---- persistence ----

  snapshot(): WorkspacesSnapshot {
    return structuredClone({
      organizations: [...this.organizations.values()],
      workspaces: [...this.workspaces.values()],
      stateVersions: [...this.stateVersions.values()],
    });
  }

  restore(snapshot: WorkspacesSnapshot): void {
    const copy = structuredClone(snapshot);
    for (const org of copy.organizations) this.organizations.set(org.name, org);
    for (const ws of copy.workspaces) this.workspaces.set(ws);
    for (const sv of copy.stateVersions) {
      this.stateVersions.set(sv.id, sv);
      this.downloads.set(sv.downloadSecret, { id: sv.id, json: false });
      if (sv.jsonDownloadSecret) this.downloads.set(sv.jsonDownloadSecret, { id: sv.id, json: true });
    }
  }
}
