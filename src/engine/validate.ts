/**
 * The steps that need no service: load and validate the manifest. Kept apart from ./workflow.ts so
 * that `converge validate` (and a library user who only validates) never loads the planner, the
 * applier or the inventory; workflow.ts re-exports these for everything else.
 */
import { type SettingNames, settingNames } from '../common/setting-names.js';
import { allowListFrom } from '../common/allow-list.js';
import { inFileOrder } from '../common/file-order.js';
import {
  loadManifest as loadManifestFiles,
  positionParserLoaded,
  sortProblems,
  withoutSecrets,
} from '../manifest/index.js';
import { formatPosition, type Manifest, ManifestError, type ManifestProblem } from '../manifest/types.js';
import type { SourcePosition } from '../common/types.js';
import {
  type Desired,
  hasLocalFiles,
  type ManifestResource,
  type ResourceKey,
} from '../resources/contract.js';
import type { Catalog } from './catalog.js';
import { carriedValues } from './carried-values.js';
import { allowedAddressesProblem, connectionAddressProblems } from './connection-addresses.js';
import { connectionSettings } from './connection-settings.js';
import { keyDesired, type SettingsOf } from './desired.js';
import { EngineError } from './errors.js';
import { defaultCatalog } from './services.js';

/** What every step reads: the services and kinds, and the environment. */
export interface EngineOptions {
  /** The services and kinds of the run; default: the four Converge ships (`defaultCatalog`). */
  catalog?: Catalog;
  /**
   * The environment: `CONVERGE_<SERVICE>_*` connections, `CONVERGE_ALLOW_ENV`, the state folder and
   * key, and the variables `${env:NAME}` may read once allowed. Default: `process.env`.
   */
  env?: NodeJS.ProcessEnv;
  /**
   * How the front end names the settings its errors may ask to change (the CLI passes its flags,
   * `{ timeout: '--timeout' }`); default: these options' own names (`timeoutSeconds`).
   */
  settingNames?: Partial<SettingNames>;
}

/** What the operator exposes to the manifest from outside it (flags of validate, plan and apply). */
export interface ManifestAccess {
  /** `--allow-env`, beside CONVERGE_ALLOW_ENV: the variables `${env:NAME}` may read. */
  allowEnv?: readonly string[];
  /** `--allow-address`: where a Connection may send a token or values from outside the manifest. */
  allowAddresses?: readonly string[];
}

export type LoadOptions = EngineOptions & ManifestAccess;

/** `validate`'s options: what loading takes, and whether the caller will ask positions of it later. */
export interface ValidateOptions extends LoadOptions {
  /**
   * The caller asks no position of the manifest once it validated (`converge validate` only reports
   * it valid): a plain manifest is then read by the fast parse alone and the position-keeping parser
   * (yaml, about a tenth of the command's start-up) is never loaded. Problems still get exact
   * positions: a manifest found invalid is read again with it. Leave unset when the manifest is
   * planned afterwards (a plan's problems point into it).
   */
  positionsOnlyForProblems?: boolean;
}

/**
 * Loads and validates the manifest at `paths` (files or folders): syntax, schema, references between
 * documents, and that no Connection would carry an outside token to an address the operator did not
 * allow. Contacts no service. Throws a `ManifestError` listing every problem with its position; a
 * manifest refused has the local files its objects name read too (see `localFileProblems`), and
 * their problems listed with the others.
 */
export async function loadManifest(paths: readonly string[], options: LoadOptions = {}): Promise<Manifest> {
  return loadManifestWith(paths, options, false);
}

async function loadManifestWith(
  paths: readonly string[],
  options: LoadOptions,
  positionsOnlyForProblems: boolean,
): Promise<Manifest> {
  if (paths.length === 0) throw new EngineError('no manifest given: name at least one file or folder');
  const { catalog = defaultCatalog, env = process.env } = options;
  const refused = allowedAddressesProblem(
    env,
    options.allowAddresses,
    settingNames(options.settingNames).allowAddresses,
  );
  if (refused !== undefined) throw new EngineError(refused);
  const manifest = await loadManifestFiles([...paths], {
    positionsOnlyForProblems,
    kinds: catalog.kinds,
    services: catalog.manifestServices,
    env,
    allowEnv: allowListFrom(
      env.CONVERGE_ALLOW_ENV,
      options.allowEnv,
      settingNames(options.settingNames).allowEnv,
    ),
  }).catch(async (error: unknown) => {
    if (!(error instanceof ManifestError && error.partial)) throw error;
    // A Connection that would carry a token to an address not allowed is said in the same run as
    // a typo elsewhere, not only once that is fixed.
    const untrusted = addressProblems(error.partial);
    const shown = new Set(error.problems.map((p) => `${formatPosition(p.position)} ${p.message}`));
    const more = untrusted.filter((p) => !shown.has(`${formatPosition(p.position)} ${p.message}`));
    const withAddresses =
      more.length > 0 ? new ManifestError(sortProblems([...error.problems, ...more])) : error;
    throw await withObjectProblems(withAddresses, error.partial, catalog, env);
  });
  const untrusted = addressProblems(manifest);
  if (untrusted.length > 0)
    throw await withObjectProblems(new ManifestError(untrusted), manifest, catalog, env);
  return manifest;

  function addressProblems(loaded: Manifest): ManifestProblem[] {
    return connectionAddressProblems(
      loaded.connections,
      catalog.definitions,
      env,
      options.allowAddresses,
      settingNames(options.settingNames).allowAddresses,
      carriedValues(loaded, catalog),
    );
  }
}

/**
 * A load's problems with those found in what did load: keying's (an object declared twice, a
 * workspace with no organization) and the local files objects name (a job's spec file, a workspace's
 * state file). Reported by the same run, not the next once these are fixed, whichever problem the
 * load found (a connection that is not declared, an object declared twice, a typo).
 */
async function withObjectProblems(
  error: ManifestError,
  partial: Manifest,
  catalog: Catalog,
  env: NodeJS.ProcessEnv,
): Promise<ManifestError> {
  const settingsOf: SettingsOf = (s, c) =>
    connectionSettings(env, catalog.definitions, partial.connections, s, c);
  // A document the load already faulted (its own duplicate check, say) is not reported twice.
  const faulted = new Set(error.problems.map((p) => formatPosition(p.position)));
  const keying = keyingProblems(partial, catalog, settingsOf).filter(
    (p) => !faulted.has(formatPosition(p.position)),
  );
  // Every document that loaded has its files read, one on a connection the load could not take or
  // declared twice included: each names its files at its own line.
  const files = await localFileProblems(keyDesired(partial, catalog, settingsOf).desired, catalog);
  // An address quoted in a message may hold a secret (refused at its own line by the load).
  const more = withoutSecrets([...keying, ...files], partial.sensitiveValues);
  return more.length > 0 ? new ManifestError(sortProblems([...error.problems, ...more])) : error;
}

/** What keying finds in a manifest the load refused, beside what the load found itself. */
function keyingProblems(partial: Manifest, catalog: Catalog, settingsOf: SettingsOf): ManifestProblem[] {
  // Objects on a connection the load could not take are its problem already (it says where).
  const declared = new Set(partial.connections.map((c) => `${c.service}\n${c.name}`));
  // Documents with problems take part as far as their metadata says who they are: a copy of a
  // document with a typo in its spec is a duplicate in this run, not only once the typo is fixed.
  const unloaded = (partial.unloaded ?? []).map(({ key, source }) => identityOnly(key, source));
  const resources = [...partial.resources, ...unloaded].filter(
    (r) =>
      r.connection === undefined || declared.has(`${catalog.kind(r.kind)?.service ?? ''}\n${r.connection}`),
  );
  const keyable: Manifest = {
    ...partial,
    resources: unloaded.length > 0 ? inFileOrder(resources, (r) => r.source, partial.files) : resources,
  };
  return keyDesired(keyable, catalog, settingsOf).problems;
}

/** A document with problems as a resource for keying only: who it is and where, nothing more. */
function identityOnly(key: ResourceKey, source: SourcePosition): ManifestResource {
  return {
    kind: key.kind,
    name: key.name,
    ...(key.namespace !== undefined ? { namespace: key.namespace } : {}),
    ...(key.connection !== undefined ? { connection: key.connection } : {}),
    spec: {},
    source,
    sensitivePointers: new Set(),
    locate: () => source,
    readFile: () => Promise.resolve({ ok: false, reason: 'not read' }),
  } as ManifestResource;
}

/** A manifest that validated, and its objects with complete keys. */
export interface ValidManifest {
  manifest: Manifest;
  desired: Desired[];
}

/**
 * Everything that can be checked without a service: the manifest (`loadManifest`), complete keys and
 * objects declared twice (`desiredObjects`), and the local files objects name (a workspace's state
 * file), so CI catches those too. Throws a `ManifestError` listing every problem, sorted by position.
 */
export async function validate(
  paths: readonly string[],
  options: ValidateOptions = {},
): Promise<ValidManifest> {
  // With the parser loaded from the start every position is exact: nothing to defer.
  if (!options.positionsOnlyForProblems || positionParserLoaded()) return validateOnce(paths, options, false);
  try {
    return await validateOnce(paths, options, true);
  } catch (error) {
    // Positions taken while the parser was not yet loaded point at their document's start (a
    // Connection's address, read from a plain file before a later file needed the parser): read
    // again with it from the start, for every problem's line and column.
    if (error instanceof ManifestError) return validateOnce(paths, options, false);
    throw error;
  }
}

async function validateOnce(
  paths: readonly string[],
  options: LoadOptions,
  positionsOnlyForProblems: boolean,
): Promise<ValidManifest> {
  const catalog = options.catalog ?? defaultCatalog;
  // Settings only: no client is made and no service contacted.
  const env = options.env ?? process.env;
  // A load that fails reports the local files of what loaded with its problems (withObjectProblems).
  const manifest = await loadManifestWith(paths, options, positionsOnlyForProblems);
  const desired = await keyedObjects(
    manifest,
    catalog,
    (s, c) => connectionSettings(env, catalog.definitions, manifest.connections, s, c),
    'always',
  );
  return { manifest, desired };
}

/**
 * A loaded manifest's objects with complete keys (see `keyedDesired`). Refused with a `ManifestError`
 * when keying finds a problem (an object declared twice however each document spells its namespace,
 * a workspace with no organization), which then also lists what the local files every object names
 * (a job's spec file, a workspace's state file) have wrong: one run reports both. `always` reads the
 * files when keying finds nothing too (`validate`); `with-problems` leaves them to the plan.
 */
export async function keyedObjects(
  manifest: Manifest,
  catalog: Catalog,
  settingsOf: SettingsOf,
  readLocalFiles: 'always' | 'with-problems',
): Promise<Desired[]> {
  const { desired, problems } = keyDesired(manifest, catalog, settingsOf);
  if (problems.length === 0 && readLocalFiles === 'with-problems') return desired;
  problems.push(...(await localFileProblems(desired, catalog)));
  if (problems.length > 0)
    throw new ManifestError(sortProblems(withoutSecrets(problems, manifest.sensitiveValues)));
  return desired;
}

/** `localFileProblems` of `desired`, refused as keying refuses its own (sorted, no secret in them). */
export async function refuseLocalFileProblems(
  desired: readonly Desired[],
  catalog: Catalog,
  manifest: Manifest,
): Promise<void> {
  const problems = await localFileProblems(desired, catalog);
  if (problems.length > 0)
    throw new ManifestError(sortProblems(withoutSecrets(problems, manifest.sensitiveValues)));
}

/**
 * The local files objects name (a job's spec file, a workspace's state file), read as the plan will
 * read them: a missing or unreadable one is a manifest problem, found before any service is asked.
 */
export async function localFileProblems(
  desired: readonly Desired[],
  catalog: Catalog,
): Promise<ManifestProblem[]> {
  const problems: ManifestProblem[] = [];
  for (const d of desired) {
    const kind = catalog.kind(d.key.kind);
    if (!hasLocalFiles(kind) || d.ensure === 'absent' || !d.resource) continue;
    const resolved = await kind.resolve(d);
    for (const p of resolved.problems)
      problems.push({ position: p.position ?? d.resource.source, message: p.message });
  }
  return problems;
}
