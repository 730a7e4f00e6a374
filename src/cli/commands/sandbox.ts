/**
 * `converge sandbox`: delegates to the sandbox, which runs until SIGINT or SIGTERM. The sandbox is
 * imported here, when the command runs, so that every other command starts without loading it and
 * its dependencies (WebAssembly HCL parser, OpenPGP, LDAP client, cron parser).
 */
import type { Io } from '../io.js';

export interface SandboxFlags {
  port: number;
  host: string;
  token?: string;
  data?: string;
  config?: string;
}

export async function sandboxCommand(flags: SandboxFlags, io: Io): Promise<number> {
  const { runSandboxCommand } = await import('../../sandbox/command.js');
  return runSandboxCommand(
    {
      port: flags.port,
      host: flags.host,
      ...(flags.token !== undefined ? { token: flags.token } : {}),
      ...(flags.data !== undefined ? { data: flags.data } : {}),
      ...(flags.config !== undefined ? { config: flags.config } : {}),
    },
    { stdout: io.stdout, stderr: io.stderr },
  );
}
