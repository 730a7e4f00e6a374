/** The connection pool a client uses when the caller does not inject a dispatcher (tests do). */
import { createRequire } from 'node:module';
import type { Agent } from 'undici';

// undici is over a hundred modules: it loads with the first connection pool, not with every command
// (`converge validate` and `--help` make no request). It is CommonJS, so a synchronous require
// gives the same module an import would.
const require = createRequire(import.meta.url);

let agentClass: typeof Agent | undefined;

/**
 * undici's `Agent` with the request API, without the rest of undici: its index also loads fetch,
 * cookies, WebSocket, the mock agent and Node's own bundled undici, which cost every command that
 * makes a request ~50 ms of CPU more (a third of a small plan's). The index does no more for the
 * Agent than add the API methods to the dispatcher prototype, as below. Should a later undici move
 * those files, the whole package is loaded instead.
 */
function loadAgent(): typeof Agent {
  if (agentClass) return agentClass;
  try {
    const dispatcher = require('undici/lib/dispatcher/dispatcher.js') as { prototype: object };
    const api = require('undici/lib/api/index.js') as Record<string, unknown>;
    if (typeof api.request !== 'function') throw new Error('undici layout changed');
    Object.assign(dispatcher.prototype, api);
    agentClass = require('undici/lib/dispatcher/agent.js') as typeof Agent;
  } catch {
    agentClass = (require('undici') as typeof import('undici')).Agent;
  }
  return agentClass;
}

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
  const AgentClass = loadAgent();
  return new AgentClass({
    connections: options.maxConnections,
    keepAliveTimeout: options.keepAliveTimeoutMs,
    connect: {
      timeout: options.connectTimeoutMs,
      rejectUnauthorized: options.insecureSkipTlsVerify !== true,
      ...(options.caCertificate ? { ca: options.caCertificate } : {}),
    },
  });
}
