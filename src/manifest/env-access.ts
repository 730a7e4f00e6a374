/**
 * Which environment variables a manifest may read. A manifest may come from anyone (a pull request)
 * while the process holds Converge's tokens, so `${env:NAME}` reads only what the operator exposes
 * outside the manifest (`CONVERGE_ALLOW_ENV`, the `allowEnv` option), and never Converge's own credentials,
 * not even under `*`: a plan printed into a pull-request comment must not be a way to read them.
 *
 * "Never" includes a copy under another name in another encoding: a variable holding a token in
 * base64, base32, hex or without its dashes, or the state key in upper-case hex or in base64, is
 * refused like the token itself. What counts as holding a credential is what the error scrubber
 * would remove (`scrubSecrets`), so the two agree on every encoding. The state key is also looked
 * for in its file (`state.key` of the state folder), which a CI job may have exported too.
 */
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { scrubSecrets } from '../common/scrub.js';
import type { AllowList } from '../common/allow-list.js';
import { LIBRARY_SETTING_NAMES } from '../common/setting-names.js';

/** What `${env:NAME}` finds: the value, nothing, or a refusal in words (never quoting a value). */
export type EnvLookup = { value: string } | { missing: true; suggestion?: string } | { refused: string };

/** `CONVERGE_REGISTRY_TOKEN`, `CONVERGE_SECRETS_TOKEN`, … and the state key: never readable by name. */
function isCredentialName(name: string): boolean {
  return /^CONVERGE_.*TOKEN$/i.test(name) || name.toUpperCase() === 'CONVERGE_STATE_KEY';
}

/**
 * A credential shorter than this is only refused when a variable equals it: refusing every variable
 * that merely contains a two-letter token would refuse most variables.
 */
const MIN_CONTAINED_CREDENTIAL = 8;

/** A state key file is a few dozen characters; anything far larger is not one and is not read. */
const MAX_STATE_KEY_FILE_BYTES = 64 * 1024;

interface Credential {
  /** How messages name it: the variable, or the state key file. */
  name: string;
  /** The value as written, and the other encodings of the same bytes (for the state key). */
  forms: string[];
}

export function envAccess(
  env: NodeJS.ProcessEnv,
  allow: AllowList,
  /** Where the default state folder `.converge` is; defaults to `process.cwd()`. */
  cwd: string = process.cwd(),
): (name: string) => EnvLookup {
  // Own properties only: `${env:constructor}` must not find Object.prototype.constructor.
  const read = (name: string) => (Object.hasOwn(env, name) ? env[name] : undefined);
  const credentials: Credential[] = [
    ...Object.keys(env)
      .filter(isCredentialName)
      .map((name) => ({ name, value: read(name) }))
      .filter((c): c is { name: string; value: string } => c.value !== undefined && c.value.trim() !== '')
      .map(({ name, value }) => ({
        name,
        forms: name.toUpperCase() === 'CONVERGE_STATE_KEY' ? keyForms(value) : tokenForms(value),
      })),
    ...stateKeyFiles(env, cwd),
  ];
  // The option as the caller names it (the CLI's flag, the library's option): this layer names none.
  const option = allow.setting ?? LIBRARY_SETTING_NAMES.allowEnv;
  const hint = (name: string) => `${option} ${name} or CONVERGE_ALLOW_ENV=${name}`;

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
    if (value === undefined) {
      // The same name in another letter case, if the manifest may read that one too (names the
      // allow-list hides are never suggested: that would tell which variables the runner has).
      const other = Object.keys(env).find(
        (n) =>
          n !== name && n.toLowerCase() === name.toLowerCase() && allow.allows(n) && !isCredentialName(n),
      );
      return other ? { missing: true, suggestion: other } : { missing: true };
    }
    // A copy of a token under another name (`MY_TOKEN=$CONVERGE_REGISTRY_TOKEN`) is still the token,
    // and so is the token in base64 or another letter case.
    // Hex as tools print it (`xxd -p` breaks lines, `od` and `hexdump` space the bytes, `0x` or `:`
    // between them) is compared without its separators too.
    const compact = value.replace(/0x|[\s:]/gi, '');
    const copied = credentials.find((c) =>
      c.forms.some((form) => holds(value, form) || (compact !== value && holds(compact, form))),
    );
    if (copied) {
      return {
        refused: `environment variable ${name} holds the value of ${copied.name}, one of Converge's credentials, which a manifest may never read`,
      };
    }
    return { value };
  };
}

/** Whether `value` holds `credential` in any form the error scrubber removes. */
function holds(value: string, credential: string): boolean {
  if (value.trim() === credential) return true;
  return credential.length >= MIN_CONTAINED_CREDENTIAL && scrubSecrets(value, [credential]) !== value;
}

/**
 * A token as written, as the hex of its bytes (`xxd -p`), and without its dashes (a UUID-shaped
 * token copied as 32 hex digits); base64, base32, URL and JSON escapes and letter case are the
 * scrubber's.
 */
function tokenForms(value: string): string[] {
  const token = value.trim();
  const forms = [token, Buffer.from(token, 'utf8').toString('hex')];
  const undashed = token.replace(/-/g, '');
  if (undashed !== token && undashed.length >= MIN_CONTAINED_CREDENTIAL) forms.push(undashed);
  return forms;
}

/**
 * The state key files a run may use (`state.key` in `CONVERGE_STATE_DIR`, and in the default
 * `.converge`, where an earlier run may have left one), when they exist and can be read: never
 * created here, and an unreadable one simply is not compared.
 */
function stateKeyFiles(env: NodeJS.ProcessEnv, cwd: string): Credential[] {
  const folders = new Set([env.CONVERGE_STATE_DIR || '.converge', '.converge']);
  const out: Credential[] = [];
  for (const folder of folders) {
    const shown = path.join(folder, 'state.key');
    const file = path.resolve(cwd, shown);
    try {
      const stat = statSync(file);
      if (!stat.isFile() || stat.size > MAX_STATE_KEY_FILE_BYTES) continue;
      const text = readFileSync(file, 'utf8').trim();
      if (text !== '') out.push({ name: `the state key file ${shown}`, forms: keyForms(text) });
    } catch {
      // Missing or unreadable: nothing of it can leak through a variable that was set from it.
    }
  }
  return out;
}

/**
 * A state key as written, and the same bytes as hex and base64 (both alphabets, without padding,
 * which a padded copy contains): the key read from hex is as much the key in base64.
 */
function keyForms(text: string): string[] {
  const written = text.trim();
  const std = written.replace(/-/g, '+').replace(/_/g, '/');
  const bytes = /^([0-9a-f]{2})+$/i.test(written)
    ? Buffer.from(written, 'hex')
    : /^[A-Za-z0-9+/]+={0,2}$/.test(std)
      ? Buffer.from(std, 'base64')
      : undefined;
  if (!bytes || bytes.length === 0) return [written];
  return [
    ...new Set([
      written,
      bytes.toString('hex'),
      bytes.toString('base64').replace(/=+$/, ''),
      bytes.toString('base64url'),
    ]),
  ];
}
