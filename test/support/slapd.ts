/**
 * slapd for vitest: `useSlapd()` starts one server per test file (see ./slapd-server.ts for what it
 * holds). The server itself lives in ./slapd-server.ts, free of vitest, so the demo can start one too.
 */
import { afterAll, beforeAll } from 'vitest';
import { type SlapdServer, startSlapd } from './slapd-server.js';

export * from './slapd-server.js';

export function useSlapd(): () => SlapdServer {
  let server: SlapdServer | undefined;
  beforeAll(async () => {
    server = await startSlapd();
  });
  afterAll(async () => {
    await server?.stop();
  });
  return () => {
    if (!server) throw new Error('slapd is not running (useSlapd() must be called inside a describe block)');
    return server;
  };
}
