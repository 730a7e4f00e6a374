/**
 * The catalog: every service Converge knows, each as one module (client definition and kinds). The
 * planner's and applier's kind lookup, the manifest schema and every front end read it; the list of
 * modules itself lives in `./services.ts`, the only shared file that names services.
 */
import type { AnyServiceDefinition } from '../clients/service.js';
import type { ManifestService } from '../manifest/index.js';
import { type AnyResourceKind, hasApplySwitches, type KindOption } from '../resources/contract.js';

/** One service as the engine sees it. Front ends extend it (the CLI adds the service's commands). */
export interface ServiceModule {
  readonly definition: AnyServiceDefinition;
  /** The manifest kinds kept in this service. */
  readonly kinds: readonly AnyResourceKind[];
}

/**
 * The services of a run. Generic over the module type so that a front end's catalog keeps what it
 * added to each module (the CLI's commands) while the engine reads only definitions and kinds.
 */
export class Catalog<M extends ServiceModule = ServiceModule> {
  readonly modules: readonly M[];
  readonly kinds: readonly AnyResourceKind[];
  readonly definitions: readonly AnyServiceDefinition[];
  /** What the manifest layer needs: service names and their Connection settings. */
  readonly manifestServices: readonly ManifestService[];
  private readonly kindsByName: ReadonlyMap<string, AnyResourceKind>;

  constructor(modules: readonly M[]) {
    this.modules = modules;
    this.definitions = modules.map((m) => m.definition);
    this.kinds = modules.flatMap((m) => m.kinds);
    this.manifestServices = this.definitions.map((d) => ({
      name: d.name,
      ...(d.settings
        ? { settings: d.settings.map((s) => ({ key: s.key, description: s.description })) }
        : {}),
    }));
    this.kindsByName = new Map(this.kinds.map((k) => [k.kind, k]));
    this.check();
  }

  /** The kind of a manifest `kind:` value; the planner's and applier's only way to a kind. */
  kind = (name: string): AnyResourceKind | undefined => this.kindsByName.get(name);

  definition(service: string): AnyServiceDefinition | undefined {
    return this.definitions.find((d) => d.name === service);
  }

  /** The switches kinds offer on `apply`, each once. */
  kindOptions(): KindOption[] {
    const byFlag = new Map<string, KindOption>();
    for (const kind of this.kinds)
      for (const option of hasApplySwitches(kind) ? kind.options : []) byFlag.set(option.flag, option);
    return [...byFlag.values()];
  }

  /** Two modules claiming one service or kind is a programming error: fail at start, not mid-plan. */
  private check(): void {
    const seen = new Set<string>();
    for (const d of this.definitions) {
      if (seen.has(d.name)) throw new Error(`two service modules are named ${d.name}`);
      seen.add(d.name);
    }
    if (this.kindsByName.size !== this.kinds.length) throw new Error('two service modules define one kind');
    for (const m of this.modules) {
      for (const k of m.kinds) {
        if (k.service !== m.definition.name) {
          throw new Error(`kind ${k.kind} says service ${k.service} but is listed by ${m.definition.name}`);
        }
      }
    }
  }
}
