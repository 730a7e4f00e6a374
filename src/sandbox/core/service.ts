/**
 * The contract between the sandbox core and one emulated service. The core owns the port, the
 * tokens, fault injection, persistence and shutdown; a service module owns its paths, its state, its
 * error format and its config section. Adding a service is one new module listed in
 * `../services/index.ts` (or passed to `startSandbox({ services })`).
 */
import type { TSchema } from '@sinclair/typebox';
import type { SandboxRequest, SandboxResponse } from './http.js';
import type { Router } from './router.js';
import type { TokenStore } from './tokens.js';

/** A service's name: its config section, its token rights key, the env-var infix (`CONVERGE_<NAME>_ADDR`). */
export type SandboxServiceName = string;

/** A problem found while checking a service's config section; `path` is relative to the section. */
export interface ServiceConfigIssue {
  path: (string | number)[];
  message: string;
}

export interface ServiceContext<Config = unknown> {
  /** The service's validated config section (`registry:` for the registry), if any. */
  config: Config | undefined;
  tokens: TokenStore;
  /** State saved by a previous run in the data folder, or undefined (fresh start or no data folder). */
  persisted: unknown;
  /** Call after every change to state; the core saves a snapshot shortly after (debounced). */
  markDirty(): void;
  /** Aborted when the sandbox closes: pending blocking queries must answer then. */
  shutdown: AbortSignal;
  log(line: string): void;
  /** The data folder (`--data`), when state is kept; a service may keep files of its own there. */
  dataDir: string | undefined;
}

/**
 * What services add to the object `startSandbox` returns, one property per thing a caller may need
 * that only the service knows (the secrets service's recovery key shares). Empty here: each service
 * module adds its own properties with a `declare module` block, so the core never names them.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by declaration merging
export interface SandboxServiceExtras {}

export interface ServiceInstance {
  /** A JSON-serialisable copy of the state, written to `<dataDir>/<name>.json`; absent: no state. */
  snapshot?(): unknown;
  /**
   * Properties for the running sandbox object (declared in `SandboxServiceExtras`); a name another
   * service or the sandbox itself already uses is refused at start.
   */
  extras?: Partial<SandboxServiceExtras>;
  /**
   * Text `converge sandbox` prints once on stderr after the export lines, each ending in a newline
   * (the recovery key shares a fresh start made, as the real service's initialisation shows them).
   */
  startupNotes?: string[];
  /**
   * Called once every service has been created, before the port opens (a start that fails while
   * creating a later service leaves nothing behind).
   */
  created?(): void;
}

export interface SandboxServiceDefinition<Config = unknown> {
  readonly name: SandboxServiceName;
  /** Path prefixes the service owns; used to pick the error format for 404s and injected faults. */
  readonly pathPrefixes: readonly string[];
  /**
   * Methods beyond those node's HTTP parser knows (the secrets service's `LIST`); the core lets them
   * through to the router (see `core/method-framer.ts`).
   */
  readonly extensionMethods?: readonly string[];
  /** JSON schema of the service's top-level config section (key = `name`). */
  readonly configSchema?: TSchema;
  /** JSON schema of the service's rights inside each `tokens[]` entry (key = `name`). */
  readonly tokenRightsSchema?: TSchema;
  /** Checks beyond the schema (references between entries, seed objects); positions are added by the caller. */
  checkConfig?(section: Config): ServiceConfigIssue[];
  /**
   * Checks one token's rights entry beyond the schema (e.g. teams that must exist in the service's
   * section); `path` is relative to `tokens[i].<name>`. Called only for tokens that have the entry.
   */
  checkTokenRights?(rights: unknown, section: Config | undefined): ServiceConfigIssue[];
  /** Renders an error produced by the core (fault, unknown path, internal error) in the service's own style. */
  errorResponse(status: number, message: string): SandboxResponse;
  /** 405 body for a path the service owns but not with this method (the core adds the Allow header). */
  methodNotAllowed?(method: string, allowed: string[]): SandboxResponse;
  /** 404 for a path under the service's prefixes that no route matches. */
  notFound?(req: SandboxRequest): SandboxResponse;
  /**
   * Further `CONVERGE_<NAME>_*` variables a client needs beside ADDR and TOKEN (the workspace
   * service's default organization), from the service's config section.
   */
  exports?(section: Config | undefined): Record<string, string>;
  /**
   * Builds the running service: registers routes and restores or seeds state. Throws (or rejects) on
   * bad seeds. May be async (the secrets service splits its recovery key on first start).
   */
  create(ctx: ServiceContext<Config>, router: Router): ServiceInstance | Promise<ServiceInstance>;
}

/** Keeps the `Config` type parameter when a definition is listed beside others. */
export function defineService<Config>(
  def: SandboxServiceDefinition<Config>,
): SandboxServiceDefinition<Config> {
  return def;
}

export type AnyServiceDefinition = SandboxServiceDefinition<never>;

/** Whether a request path belongs to a prefix: `/v1/job` owns `/v1/job/x` and `/v1/jobs`. */
export function pathHasPrefix(path: string, prefix: string): boolean {
  return path.startsWith(prefix);
}

export type { SandboxRequest, SandboxResponse };
