/**
 * How a front end spells the settings that an error message may ask its user to change. The engine
 * and the HTTP layer are a library with more than one front end, so their messages name a setting
 * as the library's option by default (`timeoutSeconds`) and as the front end's own word when it
 * gives one (the CLI gives its flags: `--timeout`): each reader is told the name they can act on.
 * Environment variables (CONVERGE_MAX_RESPONSE_BYTES, CONVERGE_ALLOW_ENV) are not here: the library
 * reads them too, so they read the same to everyone.
 */
export interface SettingNames {
  /** How long a request may take, retries included. */
  timeout: string;
  /** How many requests may be in flight at once. */
  parallelism: string;
  /** How long to wait for a lock another run holds. */
  lockTimeout: string;
  /** Address globs to plan (with what they need). */
  targets: string;
  /** Address globs to leave out. */
  excludes: string;
  /** Plan deletions of what the manifest no longer declares. */
  prune: string;
  /** Prune a kind the manifest declares none of. */
  allowEmpty: string;
  /** The most deletions a plan may hold. */
  maxDeletes: string;
  /** The kinds an export reads. */
  kinds: string;
  /** Where an export reads (a namespace, organization or mount). */
  namespace: string;
  /** The manifest Connection an export reads through. */
  connection: string;
  /** The manifest files or folders (whose Connections may be named). */
  manifest: string;
  /** Addresses a Connection may send a token or values from outside the manifest to. */
  allowAddresses: string;
  /** Environment variables `${env:NAME}` may read (beside CONVERGE_ALLOW_ENV). */
  allowEnv: string;
  /** The folder an export writes its files into. */
  exportDir: string;
}

/** The library's option names: what a program calling the engine sets. */
export const LIBRARY_SETTING_NAMES: Readonly<SettingNames> = {
  timeout: 'timeoutSeconds',
  parallelism: 'parallelism',
  lockTimeout: 'timeoutMs',
  targets: 'targets',
  excludes: 'excludes',
  prune: 'prune',
  allowEmpty: 'limits.allowEmpty',
  maxDeletes: 'limits.maxDeletes',
  kinds: 'kinds',
  namespace: 'namespace',
  connection: 'connection',
  manifest: 'manifest',
  allowAddresses: 'allowAddresses',
  allowEnv: 'allowEnv',
  exportDir: 'dir',
};

/** The names to use: the front end's where it gave them, the library's otherwise. */
export function settingNames(given?: Partial<SettingNames>): SettingNames {
  return { ...LIBRARY_SETTING_NAMES, ...given };
}
