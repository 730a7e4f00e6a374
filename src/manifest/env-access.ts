/**
 * Which environment variables a manifest may read. A manifest may come from anyone (a pull request)
 * while the process holds Converge's tokens, so `${env:NAME}` reads only what the operator exposes
 * outside the manifest (`CONVERGE_ALLOW_ENV`, `--allow-env`), and never Converge's own credentials,
 * not even under `*`: a plan printed into a pull-request comment must not be a way to read them.
 */
import type { AllowList } from '../common/allow-list.js';

/** What `${env:NAME}` finds: the value, nothing, or a refusal in words (never quoting a value). */
export type EnvLookup = { value: string } | { missing: true } | { refused: string };

/** `CONVERGE_REGISTRY_TOKEN`, `CONVERGE_SECRETS_TOKEN`, … and the state key: never readable by name. */
function isCredentialName(name: string): boolean {
  return /^CONVERGE_.*TOKEN$/i.test(name) || name.toUpperCase() === 'CONVERGE_STATE_KEY';
}

/**
 * A credential shorter than this is only refused when a variable equals it: refusing every variable
 * that merely contains a two-letter token would refuse most variables.
 */
const MIN_CONTAINED_CREDENTIAL = 8;

export function envAccess(env: NodeJS.ProcessEnv, allow: AllowList): (name: string) => EnvLookup {
  // Own properties only: `${env:constructor}` must not find Object.prototype.constructor.
  const read = (name: string) => (Object.hasOwn(env, name) ? env[name] : undefined);
  const credentials = Object.keys(env)
    .filter(isCredentialName)
    .map((name) => ({ name, value: read(name) }))
    .filter((c): c is { name: string; value: string } => c.value !== undefined && c.value.trim() !== '');
  const hint = (name: string) => `--allow-env ${name} or CONVERGE_ALLOW_ENV=${name}`;

  return (name) => {
    if (isCredentialName(name)) {
      return {
        refused: `environment variable ${name} is one of Converge's credentials, which a manifest may never read`,
      };
    }
    if (!allow.allows(name)) {
      return {
        refused: `environment variable ${name} is not exposed to the manifest: allow it with ${hint(name)}`,
      };
    }
    const value = read(name);
    if (value === undefined) return { missing: true };
    // A copy of a token under another name (`MY_TOKEN=$CONVERGE_REGISTRY_TOKEN`) is still the token.
    const copied = credentials.find(
      (c) =>
        value.trim() === c.value.trim() ||
        (c.value.length >= MIN_CONTAINED_CREDENTIAL && value.includes(c.value)),
    );
    if (copied) {
      return {
        refused: `environment variable ${name} holds the value of ${copied.name}, one of Converge's credentials, which a manifest may never read`,
      };
    }
    return { value };
  };
}
