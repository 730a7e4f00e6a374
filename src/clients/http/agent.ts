/** The connection pool a client uses when the caller does not inject a dispatcher (tests do). */
import { Agent } from 'undici';

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
  return new Agent({
    connections: options.maxConnections,
    keepAliveTimeout: options.keepAliveTimeoutMs,
    connect: {
      timeout: options.connectTimeoutMs,
      rejectUnauthorized: options.insecureSkipTlsVerify !== true,
      ...(options.caCertificate ? { ca: options.caCertificate } : {}),
    },
  });
}
