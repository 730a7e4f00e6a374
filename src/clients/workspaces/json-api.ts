/**
 * From JSON:API documents to the client's flat types, and back for request bodies. Lenient on what it
 * reads (a missing relationship is null, not an error) and strict only where the client cannot go on
 * without a value: every resource needs its `id`.
 */
import { holderNameIn } from './lock-holder.js';
import type {
  JsonApiDocument,
  JsonApiIdentifier,
  JsonApiResource,
  Pagination,
  Project,
  StateVersion,
  StateVersionInput,
  Workspace,
} from './types.js';

export const JSON_API = 'application/vnd.api+json';

/** A problem with a 2xx answer's document; the client turns it into an `UnexpectedResponseError`. */
export class DocumentError extends Error {}

export function asDocument(body: unknown): JsonApiDocument {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new DocumentError('expected a JSON:API document');
  return body as JsonApiDocument;
}

export function singleResource(doc: JsonApiDocument, type: string): JsonApiResource {
  const data = doc.data;
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    throw new DocumentError(`expected a single ${type} resource in "data"`);
  return checkResource(data, type);
}

export function resourceList(doc: JsonApiDocument, type: string): JsonApiResource[] {
  if (!Array.isArray(doc.data)) throw new DocumentError(`expected a list of ${type} in "data"`);
  return doc.data.map((r) => checkResource(r, type));
}

function checkResource(resource: JsonApiResource, type: string): JsonApiResource {
  if (typeof resource?.id !== 'string' || resource.id === '')
    throw new DocumentError(`a ${type} resource without an id`);
  if (resource.type !== undefined && resource.type !== type)
    throw new DocumentError(`expected a ${type} resource, got ${String(resource.type)}`);
  return resource;
}

/** `relationships.<name>.data` when it is a single identifier. */
export function related(resource: JsonApiResource, name: string): JsonApiIdentifier | null {
  const data = resource.relationships?.[name]?.data;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return null;
  return typeof data.id === 'string' ? { id: data.id, type: String(data.type) } : null;
}

function findIncluded(included: readonly JsonApiResource[], ref: JsonApiIdentifier | null) {
  return ref ? included.find((r) => r.type === ref.type && r.id === ref.id) : undefined;
}

/**
 * The organization of a workspace: its `organization` relationship (whose id is the name), else the
 * organization segment of `links.self`, else the one the request named.
 */
function workspaceOrganization(resource: JsonApiResource, fallback: string | undefined): string {
  const rel = related(resource, 'organization');
  if (rel) return rel.id;
  const self = resource.links?.self;
  const match = typeof self === 'string' ? /\/organizations\/([^/]+)\/workspaces\//.exec(self) : null;
  if (match) return decodeURIComponent(match[1]!);
  return fallback ?? '';
}

export function toWorkspace(
  resource: JsonApiResource,
  included: readonly JsonApiResource[] = [],
  organization?: string,
): Workspace {
  const attributes = resource.attributes ?? {};
  const project = related(resource, 'project');
  const projectName = findIncluded(included, project)?.attributes?.name;
  const lockedBy = related(resource, 'locked-by');
  const lockReason = attributes['locked-reason'];
  return {
    id: resource.id,
    organization: workspaceOrganization(resource, organization),
    name: typeof attributes.name === 'string' ? attributes.name : '',
    attributes,
    projectId: project?.id ?? null,
    projectName: typeof projectName === 'string' ? projectName : null,
    lockedBy,
    lockedByName: holderNameIn(included, lockedBy) ?? null,
    // An empty reason says nothing; shown as none.
    lockReason: lockedBy && typeof lockReason === 'string' && lockReason !== '' ? lockReason : null,
    currentStateVersionId: related(resource, 'current-state-version')?.id ?? null,
    agentPoolId: related(resource, 'agent-pool')?.id ?? null,
  };
}

export function toProject(resource: JsonApiResource, organization: string): Project {
  const name = resource.attributes?.name;
  return {
    id: resource.id,
    name: typeof name === 'string' ? name : '',
    organization: related(resource, 'organization')?.id ?? organization,
  };
}

export function toStateVersion(resource: JsonApiResource): StateVersion {
  return {
    id: resource.id,
    workspaceId: related(resource, 'workspace')?.id ?? null,
    attributes: resource.attributes ?? {},
  };
}

/** `{data:{type:'workspaces', attributes, relationships:{project:{data:{type:'projects', id}}}}}`. */
export function workspaceBody(attributes: Record<string, unknown>, projectId: string | undefined): unknown {
  const data: Record<string, unknown> = { type: 'workspaces', attributes };
  // Left out rather than sent empty: on update an absent project means "keep the current one".
  if (projectId) data.relationships = { project: { data: { type: 'projects', id: projectId } } };
  return { data };
}

export function stateVersionBody(input: StateVersionInput): unknown {
  const attributes: Record<string, unknown> = { serial: input.serial, md5: input.md5, state: input.state };
  if (input.lineage !== undefined) attributes.lineage = input.lineage;
  if (input.jsonState !== undefined) attributes['json-state'] = input.jsonState;
  if (input.jsonStateOutputs !== undefined) attributes['json-state-outputs'] = input.jsonStateOutputs;
  // Sent only when asked for: an upload that is not forced must be checked against the history.
  if (input.force) attributes.force = true;
  return { data: { type: 'state-versions', attributes } };
}

/**
 * `meta.pagination`, read defensively. Without it (a service that does not paginate this list) the
 * page is taken to be the only one, unless `links.next` names another page.
 */
export function paginationOf(
  doc: JsonApiDocument,
  requested: { number: number; size?: number },
  count: number,
): Pagination {
  const raw = (doc.meta?.pagination ?? {}) as Record<string, unknown>;
  const currentPage = intOr(raw['current-page'], requested.number);
  const pageSize = intOr(raw['page-size'], requested.size ?? count);
  const nextFromLinks = pageNumberOfLink(doc.links?.next);
  const nextPage = raw['next-page'] !== undefined ? intOrNull(raw['next-page']) : nextFromLinks;
  const prevPage =
    raw['prev-page'] !== undefined ? intOrNull(raw['prev-page']) : pageNumberOfLink(doc.links?.prev);
  return {
    currentPage,
    pageSize,
    prevPage,
    nextPage,
    totalPages: intOr(raw['total-pages'], nextPage === null ? currentPage : nextPage),
    totalCount: intOr(raw['total-count'], count),
  };
}

function intOr(value: unknown, fallback: number): number {
  return intOrNull(value) ?? fallback;
}

function intOrNull(value: unknown): number | null {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof n === 'number' && Number.isSafeInteger(n) ? n : null;
}

/** `page[number]` of a pagination link (`…?page%5Bnumber%5D=3&page%5Bsize%5D=100`). */
function pageNumberOfLink(link: unknown): number | null {
  if (typeof link !== 'string' || link === '') return null;
  try {
    return intOrNull(new URL(link, 'http://link.invalid').searchParams.get('page[number]'));
  } catch {
    return null;
  }
}
