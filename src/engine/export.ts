/**
 * `converge export`: live objects as manifest documents, through each kind's `exporter`. Reads only;
 * writes nothing to any service. Secrets never leave the service: every value at a kind's secret
 * paths, and every write-only attribute the object has (by the kind's guess or the inventory's
 * record), becomes a `${env:NAME}` placeholder the operator fills in.
 */
import { childPath } from '../resources/diff-path.js';
import pLimit from 'p-limit';
import { sensitiveEnvFrom } from '../common/allow-list.js';
import { printable } from '../common/printable.js';
import { scrubSecrets } from '../common/scrub.js';
import { settingNames } from '../common/setting-names.js';
import type { Manifest } from '../manifest/types.js';
import { heldWriteOnly, type WriteOnlyDigests } from '../planner/write-only.js';
import { isMaskableSecret } from '../planner/masking.js';
import {
  type AnyResourceKind,
  addressOf,
  type Exportable,
  isExportable,
  isListable,
  isNamespaced,
  namespaceFieldOf,
  type Observed,
  type ResourceKey,
  secretMapsOf,
  sensitivePathsOf,
  writeOnlyPaths,
} from '../resources/contract.js';

type ExportableKind = AnyResourceKind & Exportable;
import type { Catalog } from './catalog.js';
import { EngineError, ServiceNotConfiguredError } from './errors.js';
import { defaultCatalog } from './services.js';
import { closestAddresses } from './targeting.js';
import { connect, type ConnectOptions } from './workflow.js';
import { editDistance } from '../common/edit-distance.js';

/** Reads of one kind's objects one by one (a read per key, a whole read per listed job) at most this many at once. */
const READ_CONCURRENCY = 10;

export interface ExportOptions extends ConnectOptions {
  /** `--kind`: only these kinds (as the manifest spells them); default every kind that can export. */
  kinds?: readonly string[];
  /** `--namespace`: where to read (a directory kind's mount); default each kind's default namespace. */
  namespace?: string;
  /**
   * `--connection`: a manifest Connection to read through (`manifest` must declare it); without
   * `kinds`, only the kinds of its service are read.
   */
  connection?: string;
  /** The manifest whose Connections may be used. */
  manifest?: Manifest;
  /** What Converge recorded of write-only values: those it set become placeholders too. */
  writeOnly?: Pick<WriteOnlyDigests, 'recorded' | 'digest'>;
  /**
   * Told of each kind a whole export (no `kinds`, no `namespace`) leaves out because its default
   * place does not exist (a directory auth method never enabled): `LdapGroup: nothing is mounted …`.
   * Without it such a kind is an error, as it always is when the export asked for it by name.
   */
  onLeftOut?: (message: string) => void;
}

/** Whether a name a user gave a value (an `Env` entry) says the value is a secret. */
type SecretName = (name: string) => boolean;

/** A write-only or sensitive attribute written as a placeholder, and the variable that fills it. */
export interface Placeholder {
  path: string;
  variable: string;
}

export interface ExportedObject {
  key: ResourceKey;
  /** The metadata field the kind keeps its namespace in (`namespace`, `mount`). */
  namespaceField: string;
  spec: Record<string, unknown>;
  placeholders: Placeholder[];
  /**
   * Paths of values that held one of the run's tokens, as the service stored it, written with the
   * token redacted: fix them on the service (and rotate the token) rather than export them.
   */
  redacted?: string[];
  /**
   * Variables whose secret the object also held under other names (`Env.DSN` with the password in
   * it, a task's `args`): written there as `${env:VARIABLE}` too, so no copy is exported in clear.
   */
  copied?: string[];
}

/** The kinds to export: those asked for (each must exist and export), else every exporting kind. */
function kindsToExport(
  catalog: Catalog,
  names: readonly string[] | undefined,
  setting: string,
): ExportableKind[] {
  if (!names?.length) return catalog.kinds.filter((k) => isExportable(k));
  return names.map((name) => {
    const kind = catalog.kind(name);
    if (!kind) {
      const known = catalog.kinds.map((k) => k.kind);
      // Suggested only when it is a likely typo (`Ldapgroup`, `AclRoles`): for `bogus`, "did you
      // mean Job?" only misleads; the list of kinds follows anyway.
      const [closest] = closestAddresses(name, known, 1);
      const typo =
        closest !== undefined &&
        editDistance(name.toLowerCase(), closest.toLowerCase()) <=
          Math.max(2, Math.floor(closest.length / 3));
      throw new EngineError(
        `${setting} ${name}: no such kind${typo ? `; did you mean ${closest}?` : '.'} Kinds: ${known.join(', ')}`,
      );
    }
    if (!isExportable(kind)) throw new EngineError(`${setting} ${name}: this kind cannot be exported`);
    return kind;
  });
}

/**
 * Through a Connection, only the kinds of its service: the Connection is declared for one service,
 * and every other kind would fail for want of a connection of that name. Kinds named with `kinds`
 * must be of that service too.
 */
function kindsOfConnection(
  kinds: ExportableKind[],
  options: ExportOptions,
  connection: string,
): ExportableKind[] {
  const names = settingNames(options.settingNames);
  const services = new Set(
    (options.manifest?.connections ?? []).filter((c) => c.name === connection).map((c) => c.service),
  );
  if (services.size === 0)
    throw new EngineError(
      `${names.connection} ${connection}: no Connection of that name is declared${options.manifest ? ' in the manifest' : ''}; give the manifest that declares it with ${names.manifest}`,
    );
  if (!options.kinds?.length) return kinds.filter((k) => services.has(k.service));
  const other = kinds.find((k) => !services.has(k.service));
  if (other)
    throw new EngineError(
      `${names.kinds} ${other.kind}: Connection "${connection}" is declared for the ${[...services].join(' and ')} service, not the ${other.service} service`,
    );
  return kinds;
}

/** Reads live objects and turns them into manifest documents, in a stable order. */
export async function exportLive(options: ExportOptions = {}): Promise<ExportedObject[]> {
  const catalog = options.catalog ?? defaultCatalog;
  const asked = kindsToExport(catalog, options.kinds, settingNames(options.settingNames).kinds);
  const kinds =
    options.connection === undefined ? asked : kindsOfConnection(asked, options, options.connection);
  const connections = connect(options.manifest, options);
  try {
    const connection = options.connection;
    const read: Array<{ kind: ExportableKind; observed: Observed; address: string }> = [];
    const missing: string[] = [];
    const whole = !options.kinds?.length && options.namespace === undefined;
    let unconfigured: ServiceNotConfiguredError | undefined;
    let configured = false;
    for (const kind of kinds) {
      let live: Observed[];
      try {
        connections.requireConfigured(kind.service, connection);
        live = await readKind(kind, connections, options.namespace, connection);
        configured = true;
      } catch (error) {
        // Asked for everything, a service with no address set is left out, said aloud, as a missing
        // mount is: only the services a project uses need configuring.
        if (!(whole && options.onLeftOut && error instanceof ServiceNotConfiguredError)) throw error;
        unconfigured ??= error;
        options.onLeftOut(`${kind.kind}: ${error.message}`);
        continue;
      }
      for (const observed of live) read.push({ kind, observed, address: addressOf(observed.key) });
      const why = live.length === 0 ? await missingScope(kind, connections, options) : undefined;
      if (why === undefined) continue;
      // Asked for nothing in particular, a place that is not there is one kind left out, said aloud:
      // a secrets service without the directory auth method must not fail the export of the rest.
      if (whole && options.onLeftOut) options.onLeftOut(`${kind.kind}: ${why}`);
      else missing.push(`${kind.kind}: ${why}`);
    }
    // No service configured at all is no export of "nothing".
    if (unconfigured && !configured)
      throw new EngineError(
        `no service is configured to export from: ${unconfigured.message.replace(/:.*$/s, '')}, nor any other service's address`,
      );
    if (missing.length > 0) throw missingScopeError(missing, options, found(read));
    // In address order before any variable is named: which of two colliding names gets a suffix
    // must not depend on the order a service listed them in.
    read.sort((a, b) => a.address.localeCompare(b.address));
    const variables = uniqueVariables();
    const secretName = sensitiveEnvFrom((options.env ?? process.env).CONVERGE_SENSITIVE_ENV).allows;
    const exported: ExportedObject[] = [];
    for (const { kind, observed } of read) {
      const object = exportOne(kind, observed, options.writeOnly, variables, secretName);
      if (object) exported.push(object);
    }
    // A service that stored this run's token in a value (a description) must not have it written
    // into files meant for a repository: each such value is written with the token redacted, and
    // the object says so (the plan masks the same values).
    const tokens = connections.echoedCredentials();
    if (tokens.length > 0) for (const object of exported) redactTokens(object, tokens);
    return exported;
  } finally {
    await connections.close();
  }
}

/** Replaces each of `tokens` (in any encoding the scrubber knows) in the object's values; notes where. */
function redactTokens(object: ExportedObject, tokens: readonly string[]): void {
  const paths: string[] = [];
  const walk = (value: unknown, at: string): unknown => {
    if (typeof value === 'string') {
      const scrubbed = scrubSecrets(value, tokens);
      if (scrubbed !== value) paths.push(at);
      return scrubbed;
    }
    if (Array.isArray(value)) return value.map((v, i) => walk(v, `${at}[${i}]`));
    if (value !== null && typeof value === 'object')
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, childPath(at, k))]));
    return value;
  };
  object.spec = walk(object.spec, '') as Record<string, unknown>;
  if (paths.length > 0) object.redacted = paths;
}

/** Why a kind's empty read found nothing: its scope does not exist (where the kind can tell). */
function missingScope(
  kind: ExportableKind,
  connections: ReturnType<typeof connect>,
  options: ExportOptions,
): Promise<string | undefined> {
  const scope = {
    ...(options.namespace !== undefined ? { namespace: options.namespace } : {}),
    ...(options.connection !== undefined ? { connection: options.connection } : {}),
  };
  return kind.exporter.missingScope?.(connections, scope) ?? Promise.resolve(undefined);
}

/**
 * A scope that does not exist is an error, not an empty export: a misspelt organization or mount
 * would otherwise pass for one with nothing in it. Every such scope is named at once.
 */
function missingScopeError(
  missing: readonly string[],
  options: ExportOptions,
  foundKinds: readonly string[],
): EngineError {
  const names = settingNames(options.settingNames);
  const fix =
    options.namespace !== undefined
      ? `check ${names.namespace} ${printable(options.namespace)}`
      : options.kinds?.length
        ? 'check the settings they come from'
        : `check the settings they come from, or leave those kinds out with ${names.kinds}`;
  // What other kinds found there is not thrown away unsaid: `--namespace '*'` reads every namespace
  // of the registry and the scheduler, but no organization or mount is called `*`.
  const other =
    foundKinds.length > 0
      ? `\nObjects of ${foundKinds.join(', ')} were found there: export them with ${foundKinds.map((k) => `${names.kinds} ${k}`).join(' ')}.`
      : '';
  return new EngineError(
    missing.length === 1
      ? `${missing[0]}; nothing was exported (${fix})${other}`
      : `nothing was exported: these do not exist (${fix}):\n${missing.map((m) => `  ${m}`).join('\n')}${other}`,
  );
}

/** The kinds of the objects read, in the order first read. */
function found(read: ReadonlyArray<{ kind: ExportableKind }>): string[] {
  return [...new Set(read.map((r) => r.kind.kind))];
}

async function readKind(
  kind: ExportableKind,
  connections: ReturnType<typeof connect>,
  namespace: string | undefined,
  connection: string | undefined,
): Promise<Observed[]> {
  const scope = {
    ...(namespace !== undefined ? { namespace } : {}),
    ...(connection !== undefined ? { connection } : {}),
  };
  const reads = pLimit(READ_CONCURRENCY);
  const keys = kind.exporter.keys?.(scope);
  if (keys) {
    const found = await Promise.all(keys.map((key) => reads(() => kind.observe(connections, key))));
    return found.filter((o): o is Observed => o !== undefined);
  }
  if (!isListable(kind)) return [];
  // A namespaced kind is read in one namespace: the one asked for, or where its objects go by default.
  const ns =
    isNamespaced(kind) && namespace === undefined
      ? kind.effectiveNamespace(
          { kind: kind.kind, name: '', ...(connection !== undefined ? { connection } : {}) },
          connections.settings(kind.service, connection),
        )
      : namespace;
  const items = await kind.list(connections, { ...scope, ...(ns !== undefined ? { namespace: ns } : {}) });
  // A list that gives less than a read (the job list: names and Meta) is completed object by object.
  const readWhole = kind.readWhole?.bind(kind);
  const listed = readWhole
    ? await Promise.all(items.map((o) => reads(() => readWhole(connections, o))))
    : items;
  // A key always names its namespace, so the document says where the object is.
  return listed.map((o) =>
    ns !== undefined && o.key.namespace === undefined ? { ...o, key: { ...o.key, namespace: ns } } : o,
  );
}

function exportOne(
  kind: ExportableKind,
  observed: Observed,
  recorded: ExportOptions['writeOnly'],
  variableFor: VariableNamer,
  secretName: SecretName,
): ExportedObject | undefined {
  const spec = kind.exporter.spec(observed) as Record<string, unknown> | undefined;
  if (spec === undefined) return undefined;
  const key = observed.key;
  const address = addressOf(key);
  const placeholders: Placeholder[] = [];
  /** Each secret replaced, by its value: its copies elsewhere in the object are replaced too. */
  const secrets = new Map<string, string>();
  const placeholder = (path: string, value: unknown) => {
    const variable = variableFor(key, path);
    placeholders.push({ path, variable });
    if (typeof value === 'string') secrets.set(value, variable);
    return `\${env:${variable}}`;
  };
  const withSecrets = structuredClone(spec);
  for (const pattern of sensitivePathsOf(kind)) replaceAt(withSecrets, pattern.split('.'), [], placeholder);
  for (const map of secretMapsOf(kind)) {
    replaceAt(
      withSecrets,
      [...map.split('.'), '*'],
      [],
      placeholder,
      (name, value) => typeof value === 'string' && secretName(name),
    );
  }
  // What the live object most likely holds, as a deletion's plan lists it: recorded as set by
  // Converge, or read as set by the kind, unless Converge's own last write cleared it.
  const held = new Set(heldWriteOnly(kind, address, observed, recorded));
  for (const path of writeOnlyPaths(kind)) {
    if (!held.has(path)) {
      // Whatever the service showed of a write-only value is not exported either.
      deleteAt(withSecrets, path.split('.'));
      continue;
    }
    const variable = variableFor(key, path);
    setAt(withSecrets, path.split('.'), `\${env:${variable}}`);
    placeholders.push({ path, variable });
  }
  const ours = new Set(placeholders.map((p) => `\${env:${p.variable}}`));
  const copied = new Set<string>();
  const escaped = escapeReferences(withSecrets, ours);
  return {
    key,
    namespaceField: namespaceFieldOf(kind),
    spec: (secrets.size > 0 ? replaceCopies(escaped, secrets, ours, copied) : escaped) as Record<
      string,
      unknown
    >,
    placeholders,
    ...(copied.size > 0 ? { copied: [...copied] } : {}),
  };
}

/**
 * `value` with each copy of a secret (a value `secrets` maps to its variable) inside another string
 * written as that variable's `${env:…}`: a job's `Env.DSN` holding the password of its
 * `Env.DB_PASSWORD`, a task's `args`. After `escapeReferences`, so the references written here stay
 * references. A secret shorter than the masking rule's (or a plain word such as `true`) is left:
 * replacing it would rewrite ordinary text. Longest first, so one secret inside another is not split.
 */
function replaceCopies(
  value: unknown,
  secrets: ReadonlyMap<string, string>,
  ours: ReadonlySet<string>,
  copied: Set<string>,
): unknown {
  const found = [...secrets]
    .filter(([secret]) => isMaskableSecret(secret))
    .map(([secret, variable]) => [secret.replaceAll('${', '$${'), variable] as const)
    .sort(([a], [b]) => b.length - a.length);
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') {
      if (ours.has(v)) return v;
      let out = v;
      for (const [secret, variable] of found)
        if (out.includes(secret)) {
          out = out.replaceAll(secret, `\${env:${variable}}`);
          copied.add(variable);
        }
      return out;
    }
    if (Array.isArray(v)) return v.map(walk);
    if (isObject(v)) return Object.fromEntries(Object.entries(v).map(([k, item]) => [k, walk(item)]));
    return v;
  };
  return walk(value);
}

/** Names the variable of one secret of one object; never the same name for two. */
type VariableNamer = (key: ResourceKey, path: string) => string;

/**
 * One export's variable names, unique: `web-1` and `web_1` (or `a.b` and `a_b`) spell the same
 * variable, and one variable cannot fill two secrets. The first asked for (address order) keeps the
 * readable name; each later one gets `_2`, `_3`, … (the first such name not yet given).
 */
export function uniqueVariables(): VariableNamer {
  const owners = new Map<string, string>();
  return (key, path) => {
    const base = variableFor(key, path);
    const owner = `${addressOf(key)}\u0000${path}`;
    let name = base;
    for (let n = 2; owners.has(name) && owners.get(name) !== owner; n++) name = `${base}_${n}`;
    owners.set(name, owner);
    return name;
  };
}

/** `LdapConfig/ldap` + `bindpass` → `LDAPCONFIG_LDAP_BINDPASS`: one variable per secret, readable. */
export function variableFor(key: ResourceKey, path: string): string {
  return [key.kind, key.connection, key.namespace, key.name, path]
    .filter((p): p is string => p !== undefined && p !== '')
    .join('_')
    .toUpperCase()
    .replace(/[^A-Z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .replace(/^(?=\d)/, '_');
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Replaces every present value under a secret pattern (`*` any key; lists walked) by `make(path)`;
 * with `which`, only the values it picks by their name.
 */
function replaceAt(
  value: unknown,
  pattern: string[],
  at: string[],
  make: (path: string, value: unknown) => string,
  which: (name: string, value: unknown) => boolean = () => true,
): void {
  if (Array.isArray(value)) {
    const names = value.map(itemName);
    value.forEach((item, i) => {
      if (pattern.length === 0) return;
      // An item by its name where the list names its items uniquely (`TaskGroups[web]`, as a plan
      // shows it), so a variable says which group and task it fills; else by its index.
      const name = names[i];
      const unique = name !== undefined && names.indexOf(name) === names.lastIndexOf(name);
      replaceAt(item, pattern, [...at.slice(0, -1), `${at.at(-1) ?? ''}[${unique ? name : i}]`], make, which);
    });
    return;
  }
  if (!isObject(value) || pattern.length === 0) return;
  const [head, ...rest] = pattern;
  for (const k of Object.keys(value)) {
    if (head !== '*' && head !== k) continue;
    if (rest.length === 0) {
      if (value[k] !== undefined && value[k] !== null && value[k] !== '' && which(k, value[k]))
        value[k] = make(childPath(at.join('.'), k), value[k]); // `Env["spring.datasource.password"]`, as a plan shows it
    } else replaceAt(value[k], rest, [...at, k], make, which);
  }
}

/** The `Name` an item of a list of named things (task groups, tasks) carries, if any. */
function itemName(item: unknown): string | undefined {
  return isObject(item) && typeof item.Name === 'string' && item.Name !== '' ? item.Name : undefined;
}

function setAt(target: Record<string, unknown>, path: string[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    if (!isObject(node[key])) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[path[path.length - 1]!] = value;
}

function deleteAt(target: Record<string, unknown>, path: string[]): void {
  let node: unknown = target;
  for (const key of path.slice(0, -1)) node = isObject(node) ? node[key] : undefined;
  if (isObject(node)) delete node[path[path.length - 1]!];
}

/**
 * Text from a service is data, never a reference: a live description of `${env:AWS_SECRET_KEY}`
 * would otherwise read that variable when the export is planned. `$${` is the manifest's escape.
 */
function escapeReferences(value: unknown, ours: ReadonlySet<string>): unknown {
  if (typeof value === 'string') return ours.has(value) ? value : value.replaceAll('${', () => '$${');
  if (Array.isArray(value)) return value.map((v) => escapeReferences(v, ours));
  if (isObject(value))
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, escapeReferences(v, ours)]));
  return value;
}
