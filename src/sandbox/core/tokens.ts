/**
 * The tokens the sandbox accepts. One root token holds every right in every service; config tokens
 * carry per-service rights that each service interprets (the registry reads `{ acl: read|write|none }`).
 * Each service reads the token from its own header; this store only maps a secret to an identity.
 */
import type { SandboxServiceName } from './service.js';

export interface SandboxToken {
  /** Shown in permission errors as the token's AccessorID-like identity. */
  name: string;
  secret: string;
  root: boolean;
  /** Default namespace for requests made with this token (registry precedence step 4). */
  namespace?: string;
  /** Per-service rights exactly as written in the config; absent = no rights in that service. */
  rights: Partial<Record<SandboxServiceName, unknown>>;
}

/** A `tokens[]` entry of the config: identity fields plus one rights entry per service name. */
export interface TokenConfigEntry {
  name: string;
  secret: string;
  namespace?: string;
}

export const ROOT_TOKEN_NAME = 'root';

export class TokenStore {
  private readonly bySecret = new Map<string, SandboxToken>();
  readonly root: SandboxToken;

  constructor(rootSecret: string, entries: readonly TokenConfigEntry[] = []) {
    this.root = { name: ROOT_TOKEN_NAME, secret: rootSecret, root: true, rights: {} };
    this.bySecret.set(rootSecret, this.root);
    for (const entry of entries) {
      if (this.bySecret.has(entry.secret)) {
        throw new Error(
          `token '${entry.name}' reuses the secret of token '${this.bySecret.get(entry.secret)!.name}'`,
        );
      }
      const { name, secret, namespace, ...rights } = entry as TokenConfigEntry & Record<string, unknown>;
      const token: SandboxToken = { name, secret, root: false, rights };
      if (namespace !== undefined) token.namespace = namespace;
      this.bySecret.set(secret, token);
    }
  }

  lookup(secret: string): SandboxToken | undefined {
    return this.bySecret.get(secret);
  }

  /** All tokens, root first; for services that need to list identities. */
  all(): SandboxToken[] {
    return [...this.bySecret.values()];
  }
}
