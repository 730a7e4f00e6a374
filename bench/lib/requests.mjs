// Requests counted per kind from the sandbox's log hook (one line per answered request), and the
// fewest requests the services' APIs allow for each kind and phase (the README's table).

/** The kind a request line is about, from its path. */
export function kindOfRequest(line) {
  const [method, url] = line.split(' ');
  const p = (url ?? '').split('?')[0];
  if (p.startsWith('/v1/acl/')) return 'AclRole';
  if (p.startsWith('/v1/job')) return 'Job';
  if (/^\/v1\/auth\/[^/]+\/config$/.test(p)) return 'LdapConfig';
  if (/^\/v1\/auth\/[^/]+\/groups/.test(p)) return 'LdapGroup';
  if (/^\/v1\/auth\/[^/]+\/users/.test(p)) return 'LdapUser';
  if (p.startsWith('/api/v2/')) return 'Workspace';
  return `other (${method} ${p})`;
}

const PAGE = 100;
const pages = (n) => Math.max(1, Math.ceil(n / PAGE));

/**
 * The API minimum per kind and phase, for `n` objects per kind of which `existing` exist (plans) or
 * `changed` change (applies). Plans: one list per kind (pages of 100 for workspaces), plus what the API
 * has no bulk form for: a read per directory entry (the LIST gives names only) and the scheduler's
 * plan per job (its dry run is the comparison); the role check's policy list and the configuration
 * read are one each. Applies: one write per object changed. A drifted job is read once whole, to show
 * the change against it.
 */
export function minimumRequests(phase, n, { existing = 0, changed = 0, drifted = 0 } = {}) {
  switch (phase) {
    case 'plan':
      return {
        AclRole: 2,
        Workspace: pages(existing),
        LdapConfig: 1,
        LdapGroup: 1 + (existing ? n.LdapGroup : 0),
        LdapUser: 1 + (existing ? n.LdapUser : 0),
        Job: 1 + n.Job + drifted,
      };
    case 'apply':
      return Object.fromEntries(Object.entries(changed).map(([k, v]) => [k, v]));
    default:
      throw new Error(`no minimum for ${phase}`);
  }
}

export const sum = (counts) => Object.values(counts).reduce((a, b) => a + b, 0);
