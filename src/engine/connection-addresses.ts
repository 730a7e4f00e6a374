/**
 * Where a manifest Connection may send what came from outside the manifest. On a pull request the
 * manifest is anyone's, while the process holds the operator's credentials and variables: a
 * Connection with `token: ${env:CONVERGE_REGISTRY_TOKEN}` and an address of the author's choosing
 * would carry the token there; so would a Job on a tokenless Connection with
 * `Meta: { note: "${env:DB_PASSWORD}" }`, since even `plan` sends a job whole to the scheduler's
 * plan endpoint. A Connection that carries a token, a setting or an object's value read from a
 * variable or a file (`${env:…}`, `${file:…}`) is allowed only when its address is one the operator
 * configured for its service (`CONVERGE_<SERVICE>_ADDR`) or allowed outside the manifest
 * (`CONVERGE_ALLOW_ADDRESSES`, `--allow-address`). Checked when the manifest loads, before any
 * service is contacted.
 */
import { LIBRARY_SETTING_NAMES } from '../common/setting-names.js';
import { normaliseAddress } from '../clients/http/endpoint.js';
import type { AnyServiceDefinition } from '../clients/service.js';
import { type AllowList, allowListFrom } from '../common/allow-list.js';
import { allowedAddressProblem } from '../common/allowed-address.js';
import { envVarPrefix } from '../common/types.js';
import { formatPosition, type SourcePosition } from '../common/types.js';
import type { ManifestConnection, ManifestProblem } from '../manifest/types.js';

export const ALLOW_ADDRESSES_VARIABLE = 'CONVERGE_ALLOW_ADDRESSES';

/** A value read from outside the manifest that a Connection would carry to its service. */
export interface CarriedValue {
  connection: ManifestConnection;
  /** Where the value is written. */
  position: SourcePosition;
  /** What holds it, as the user reads it: `Job "exfil" spec.Meta.note`. */
  holder: string;
  /** How it comes from outside: `is read from outside the manifest (…)`, `names a file of the runner…`. */
  what: string;
}

/**
 * Why the operator's allowed addresses cannot be used, naming where the first such one was given
 * (`CONVERGE_ALLOW_ADDRESSES`, or the option as the front end spells it) and never the address: one
 * with credentials, a query string or a fragment (`allowedAddressProblem`) may hold a secret. Said
 * whether or not a Connection needs the list, so a secret given there never reaches the commands a
 * run suggests.
 */
export function allowedAddressesProblem(
  env: NodeJS.ProcessEnv,
  allowFlags: readonly string[] = [],
  allowName: string = LIBRARY_SETTING_NAMES.allowAddresses,
): string | undefined {
  const given: [string, AllowList][] = [
    [ALLOW_ADDRESSES_VARIABLE, allowListFrom(env[ALLOW_ADDRESSES_VARIABLE])],
    [allowName, allowListFrom(undefined, allowFlags)],
  ];
  for (const [source, list] of given)
    for (const pattern of list.patterns) {
      const problem = allowedAddressProblem(pattern);
      if (problem !== undefined) return `${source}: an address (not shown) ${problem}`;
    }
  return undefined;
}

export function connectionAddressProblems(
  connections: readonly ManifestConnection[],
  services: readonly AnyServiceDefinition[],
  env: NodeJS.ProcessEnv,
  allowFlags: readonly string[] = [],
  allowName: string = LIBRARY_SETTING_NAMES.allowAddresses,
  carried: readonly CarriedValue[] = [],
): ManifestProblem[] {
  const carriedBy = new Map<ManifestConnection, CarriedValue[]>();
  for (const value of carried) {
    const values = carriedBy.get(value.connection);
    if (values) values.push(value);
    else carriedBy.set(value.connection, [value]);
  }
  const outside = connections.filter((c) => c.tokenFromOutside || carriedBy.has(c));
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
    // The allowed address is the operator's choice; whom it trusts to answer for it must be too. A
    // manifest's own CA (its file is in the pull request as well) or skipped verification would
    // hand the token to whoever answers for that name on the network.
    if (c.trustPosition) {
      const carries = c.tokenFromOutside
        ? 'takes its token from outside the manifest'
        : 'carries values read from outside the manifest';
      problems.push({
        position: c.trustPosition.position,
        message:
          `connection "${c.name}" ${carries}, so whom it trusts is the operator's to say, not the manifest's: ` +
          `${c.trustPosition.field === 'caCertificate' ? 'a caCertificate written here' : 'insecureSkipTlsVerify'} ` +
          'would let anyone who can answer for its address read them. Give the runner the CA with ' +
          'NODE_EXTRA_CA_CERTS instead, and drop this field',
      });
      continue;
    }
    const position = c.addressPosition ?? c.source;
    let address: string;
    try {
      address = normaliseAddress(c.address, `the address of connection "${c.name}"`);
    } catch (error) {
      problems.push({
        position,
        // An address read from a variable may be a secret: the reason is said without it.
        message: c.addressFromOutside
          ? `the address of connection "${c.name}" (read from outside the manifest, not shown) is not a usable URL`
          : (error as Error).message,
      });
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
    // An address read from a variable is never quoted: it may hold the very value it would carry.
    const shown = c.addressFromOutside ? 'its address (read from outside the manifest, not shown)' : address;
    const allowAs = c.addressFromOutside ? 'that address' : address;
    const remedy =
      'If that service is yours, allow it outside the manifest: ' +
      `${ALLOW_ADDRESSES_VARIABLE}=${allowAs} or ${allowName} ${allowAs} (globs such as https://*.corp.example work); ` +
      `or use the address set in ${envVarPrefix(c.service)}_ADDR`;
    if (c.tokenFromOutside) {
      problems.push({
        position,
        message:
          `connection "${c.name}" takes its token from outside the manifest and would send it to ${shown}, ` +
          `an address the operator has not allowed. ${remedy}`,
      });
      continue;
    }
    // Said once per Connection, at the first value: a project may fill many objects from variables.
    const [first, ...more] = carriedBy.get(c) ?? [];
    if (!first) continue;
    const others = more.length === 0 ? '' : ` (and ${more.length} more value${more.length === 1 ? '' : 's'})`;
    problems.push({
      position: first.position,
      message:
        `${first.holder} ${first.what} and connection "${c.name}" ` +
        `(${formatPosition(c.source)}) would send it${others} to ${shown}, an address the operator has not allowed: ` +
        `a manifest must not carry the runner's variables or files to an address it chose. ${remedy}; ` +
        'or write the value into the manifest',
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
