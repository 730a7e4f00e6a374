/** `converge sandbox`: delegates to the sandbox, which runs until SIGINT or SIGTERM. */
import { runSandboxCommand } from '../../sandbox/command.js';
import type { Io } from '../io.js';

export interface SandboxFlags {
  port: number;
  host: string;
  token?: string;
  data?: string;
  config?: string;
}

export async function sandboxCommand(flags: SandboxFlags, io: Io): Promise<number> {
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
