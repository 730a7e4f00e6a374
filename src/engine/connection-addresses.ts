/**
 * Where a manifest Connection may send a token that came from outside the manifest. On a pull
 * request the manifest is anyone's, while the process holds the operator's credentials: a
 * Connection with `token: ${env:CONVERGE_REGISTRY_TOKEN}` and an address of the author's choosing
 * would carry the token there. Such a Connection is allowed only when its address is one the
 * operator configured for its service (`CONVERGE_<SERVICE>_ADDR`) or allowed outside the manifest
 * (`CONVERGE_ALLOW_ADDRESSES`, `--allow-address`). Checked when the manifest loads, before any
 * service is contacted.
 */
import { LIBRARY_SETTING_NAMES } from '../common/setting-names.js';
import { normaliseAddress } from '../clients/http/endpoint.js';
import type { AnyServiceDefinition } from '../clients/service.js';
import { allowListFrom } from '../common/allow-list.js';
import { envVarPrefix } from '../common/types.js';
import type { ManifestConnection, ManifestProblem } from '../manifest/types.js';

export const ALLOW_ADDRESSES_VARIABLE = 'CONVERGE_ALLOW_ADDRESSES';

export function connectionAddressProblems(
  connections: readonly ManifestConnection[],
  services: readonly AnyServiceDefinition[],
  env: NodeJS.ProcessEnv,
  allowFlags: readonly string[] = [],
  allowName: string = LIBRARY_SETTING_NAMES.allowAddresses,
): ManifestProblem[] {
  const outside = connections.filter((c) => c.tokenFromOutside);
  if (outside.length === 0) return [];
  const allowed = allowListFrom(env[ALLOW_ADDRESSES_VARIABLE], allowFlags);
  // An address allowed as written (not a glob) is compared as the Connection's is, normalised: the
  // manifest's own `https://registry.example:443` allowed as such must match.
  const allowedExactly = new Set(
    allowed.patterns
      .filter((p) => !/[*?[\]{}()!]/.test(p))
      .flatMap((p) => {
        try {
          return [normaliseAddress(p, ALLOW_ADDRESSES_VARIABLE)];
        } catch {
          return [];
        }
      }),
  );
  const configured = configuredAddresses(services, env);
  const problems: ManifestProblem[] = [];
  for (const c of outside) {
    const position = c.addressPosition ?? c.source;
    let address: string;
    try {
      address = normaliseAddress(c.address, `the address of connection "${c.name}"`);
    } catch (error) {
      problems.push({ position, message: (error as Error).message });
      continue;
    }
    // `http://host:8500/` as the operator may write it matches `http://host:8500` too.
    if (
      configured.get(c.service) === address ||
      allowedExactly.has(address) ||
      allowed.allows(address) ||
      allowed.allows(`${address}/`)
    )
      continue;
    problems.push({
      position,
      message:
        `connection "${c.name}" takes its token from outside the manifest and would send it to ${address}, ` +
        'an address the operator has not allowed. If that service is yours, allow it outside the manifest: ' +
        `${ALLOW_ADDRESSES_VARIABLE}=${address} or ${allowName} ${address} (globs such as https://*.corp.example work); ` +
        `or use the address set in ${envVarPrefix(c.service)}_ADDR`,
    });
  }
  return problems;
}

/** Each service's `CONVERGE_<SERVICE>_ADDR` the operator set, normalised; a malformed one is skipped. */
function configuredAddresses(
  services: readonly AnyServiceDefinition[],
  env: NodeJS.ProcessEnv,
): Map<string, string> {
  const addresses = new Map<string, string>();
  for (const service of services) {
    const variable = `${envVarPrefix(service.name)}_ADDR`;
    const raw = env[variable]?.trim();
    if (!raw) continue;
    try {
      addresses.set(service.name, normaliseAddress(raw, variable));
    } catch {
      // Reported when that service is used.
    }
  }
  return addresses;
}
