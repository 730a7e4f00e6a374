/**
 * `POST /auth/<mount>/login/:username` (`builtin/credential/ldap/path_login.go`, `backend.go Login`,
 * and the core's login handling in `vault/request_handling.go`):
 * 1. a mount never configured answers 400 `auth method not configured`;
 * 2. with `token_bound_cidrs`, a client outside them is refused before anything else: 403
 *    `permission denied`;
 * 3. the directory half (`directoryLogin`) finds and binds the user and lists the directory groups;
 * 4. policies: the local user's policies, plus those of the local groups named by the local user's
 *    `groups` and by the directory groups (lower-cased unless `case_sensitive_names`), deduplicated;
 *    then `token_policies` in front, and the core's `SanitizePolicies` (`default` added unless
 *    `token_no_default_policy`, deduplicated, sorted); `root` or a reserved policy is refused (400);
 * 5. the token's lease: `token_period` if set, else `token_ttl` or the system default of 768h, capped
 *    by `token_max_ttl` (default also 768h) and `token_explicit_max_ttl`.
 */
import { readJsonBody } from './request.js';
import type { SandboxRequest, SandboxResponse } from '../../core/http.js';
import { remoteAddressAllowed, type SecretsAccess } from './access.js';
import { DirectoryLoginError, directoryLogin } from './directory-login.js';
import { localNameKey } from './local-names.js';
import { directorySettingsOf, type LdapConfigRecord, type MountState } from './model.js';
import { convertFields, removeDuplicates, sanitizePolicies } from './normalize.js';
import { envelope, permissionDenied, SecretsError } from './vault.js';

/** The real system default and maximum lease TTL: 768h (32 days). */
export const SYSTEM_DEFAULT_TTL = 768 * 3600;
const SYSTEM_MAX_TTL = 768 * 3600;

/** Policies an auth method may not put on a token (`nonAssignablePolicies`). */
const NON_ASSIGNABLE = ['response-wrapping', 'control-group'];

export async function handleLogin(
  req: SandboxRequest,
  mount: MountState,
  username: string,
  access: SecretsAccess,
): Promise<SandboxResponse> {
  const config = mount.config;
  if (!config) throw new SecretsError(400, 'auth method not configured');
  if (
    config.token_bound_cidrs.length > 0 &&
    !remoteAddressAllowed(req.remoteAddress, config.token_bound_cidrs)
  ) {
    throw permissionDenied();
  }
  const { values } = convertFields(await readJsonBody(req), { username: 'string', password: 'string' });
  const password = (values.password as string | null) ?? '';

  let result;
  try {
    result = await directoryLogin(directorySettingsOf(config), username, password, { signal: req.signal });
  } catch (err) {
    if (err instanceof DirectoryLoginError) throw new SecretsError(err.status, err.message);
    throw err;
  }

  const policies = [...config.token_policies, ...localPolicies(mount, config, username, result.groups)];
  for (const policy of policies.map((p) => p.trim().toLowerCase())) {
    if (policy === 'root') throw new SecretsError(400, 'auth methods cannot create root tokens');
    if (NON_ASSIGNABLE.includes(policy))
      throw new SecretsError(400, `cannot assign policy ${JSON.stringify(policy)}`);
  }
  const tokenPolicies = sanitizePolicies(policies, !config.token_no_default_policy);
  const type = config.token_type === 'batch' ? 'batch' : 'service';
  const leaseDuration = leaseDurationOf(config);
  const issued = access.issue(
    {
      mount: mount.path,
      username,
      policies: tokenPolicies,
      expiresAt: leaseDuration > 0 ? Date.now() + leaseDuration * 1000 : undefined,
    },
    type,
  );
  return envelope({
    warnings: result.warnings,
    auth: {
      client_token: issued.clientToken,
      accessor: issued.accessor,
      policies: tokenPolicies,
      // `omitempty` in the real response: absent when the token has no policy at all.
      ...(tokenPolicies.length > 0 ? { token_policies: tokenPolicies } : {}),
      metadata: { username },
      lease_duration: leaseDuration,
      renewable: type === 'service',
      entity_id: issued.entityId,
      token_type: type,
      orphan: true,
      mfa_requirement: null,
      num_uses: config.token_num_uses,
    },
  });
}

/** The policies from the local definitions (`backend.go Login`), deduplicated and sorted. */
export function localPolicies(
  mount: MountState,
  config: LdapConfigRecord,
  username: string,
  directoryGroups: readonly string[],
): string[] {
  const fold = (name: string) => localNameKey(config, name);
  const user = mount.users.get(fold(username));
  const groups = [...(user?.groups ?? []), ...directoryGroups].map(fold);
  const policies: string[] = [];
  for (const name of groups) policies.push(...(mount.groups.get(name)?.policies ?? []));
  policies.push(...(user?.policies ?? []));
  return removeDuplicates(policies, true);
}

/** The token's lease in seconds, as the token store computes it for a login. */
export function leaseDurationOf(config: LdapConfigRecord): number {
  const explicit = config.token_explicit_max_ttl;
  let ttl: number;
  if (config.token_period > 0) {
    ttl = config.token_period;
  } else {
    ttl = config.token_ttl > 0 ? config.token_ttl : SYSTEM_DEFAULT_TTL;
    const max = config.token_max_ttl > 0 ? Math.min(config.token_max_ttl, SYSTEM_MAX_TTL) : SYSTEM_MAX_TTL;
    ttl = Math.min(ttl, max);
  }
  if (explicit > 0) ttl = Math.min(ttl, explicit);
  return ttl;
}
