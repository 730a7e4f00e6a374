/** The connection pool a client uses when the caller does not inject a dispatcher (tests do). */
import { createRequire } from 'node:module';
import type { Agent } from 'undici';

// undici is over a hundred modules: it loads with the first connection pool, not with every command
// (`converge validate` and `--help` make no request). It is CommonJS, so a synchronous require
// gives the same module an import would.
const require = createRequire(import.meta.url);

export interface AgentOptions {
  caCertificate?: string;
  insecureSkipTlsVerify?: boolean;
  connectTimeoutMs: number;
  /** Sockets per origin: the applier's parallelism is capped here too. */
  maxConnections: number;
  keepAliveTimeoutMs: number;
}

/**
 * A keep-alive `Agent` (one pool per origin). Certificates are verified unless the caller switched it
 * off explicitly; a custom CA is added to, not substituted for, the verification.
 */
export function createAgent(options: AgentOptions): Agent {
  const undici = require('undici') as typeof import('undici');
  return new undici.Agent({
    connections: options.maxConnections,
    keepAliveTimeout: options.keepAliveTimeoutMs,
    connect: {
      timeout: options.connectTimeoutMs,
      rejectUnauthorized: options.insecureSkipTlsVerify !== true,
      ...(options.caCertificate ? { ca: options.caCertificate } : {}),
    },
  });
}
