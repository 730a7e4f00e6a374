/**
 * Creates the services of one sandbox start, in order: each restores its saved state (or seeds
 * itself from its config section) and registers its routes; with a data folder each service with
 * state gets a debounced saver for `<dataDir>/<name>.json`.
 */
import { JsonStateFile, StateSaver } from './persistence.js';
import type { Router } from './router.js';
import type { AnyServiceDefinition, ServiceInstance } from './service.js';
import type { TokenStore } from './tokens.js';

export interface ServiceSetup {
  /**
   * The whole sandbox config (`SandboxConfig`); each service gets its own section, by its name. Typed
   * loosely so that the core does not import config/, which imports the core.
   */
  config: object;
  tokens: TokenStore;
  router: Router;
  shutdown: AbortSignal;
  log: (line: string) => void;
  dataDir: string | undefined;
  /** How long after a change a state file is written. */
  debounceMs: number;
}

export interface CreatedServices {
  /** One per service, in the order of the list. */
  instances: ServiceInstance[];
  /** One per service that keeps state, when there is a data folder. */
  savers: StateSaver[];
}

export async function createServices(
  services: readonly AnyServiceDefinition[],
  setup: ServiceSetup,
): Promise<CreatedServices> {
  const instances: ServiceInstance[] = [];
  const savers: StateSaver[] = [];
  for (const service of services) {
    const file = setup.dataDir !== undefined ? new JsonStateFile(setup.dataDir, service.name) : undefined;
    let saver: StateSaver | undefined;
    const instance = await service.create(
      {
        config: (setup.config as Record<string, unknown>)[service.name] as never,
        tokens: setup.tokens,
        persisted: file?.load(),
        // Changes made while the service seeds itself are saved by the first markDirty after listening.
        markDirty: () => saver?.markDirty(),
        shutdown: setup.shutdown,
        log: setup.log,
        dataDir: setup.dataDir,
      },
      setup.router,
    );
    const snapshot = instance.snapshot?.bind(instance);
    if (file && snapshot) {
      saver = new StateSaver(file, snapshot, {
        debounceMs: setup.debounceMs,
        onError: (err) => setup.log(`sandbox: cannot save ${file.path}: ${err.message}`),
      });
      savers.push(saver);
    }
    instances.push(instance);
  }
  return { instances, savers };
}
