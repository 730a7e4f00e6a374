/**
 * How CLI commands reach services: the engine's ServiceConnections, with every retry reported on
 * standard error as it happens, so a slow service is never silent.
 */
import type { RunHttpOptions, ServiceClient, ServiceDefinition } from '../clients/service.js';
import { httpOptions, ServiceConnections } from '../engine/connections.js';
import { answerLost } from '../clients/http/retry-policy.js';
import { scrubSecrets } from '../common/scrub.js';
import { CliError } from './exit-codes.js';
import { type Interrupt, onInterrupt } from './interrupt.js';
import type { Io } from './io.js';
import { retryReporter } from './retry-log.js';
import { CLI_SETTING_NAMES } from './setting-flags.js';

/** HTTP options for a run of `plan`, `apply` or an operator command: retries go to stderr. */
export function runHttpOptions(
  io: Pick<Io, 'stderr' | 'env'>,
  timeoutSeconds?: number,
  parallelism?: number,
): RunHttpOptions {
  const report = retryReporter((line) => io.stderr.write(`${line}\n`));
  return httpOptions(io.env, {
    onRetry: report.onRetry,
    onRateLimitPause: report.onRateLimitPause,
    ...(timeoutSeconds !== undefined ? { timeoutSeconds } : {}),
    ...(parallelism !== undefined ? { parallelism } : {}),
    settingNames: CLI_SETTING_NAMES,
  });
}

/**
 * A one-shot write of an operator command (a scale, a dispatch, a revert): `what` names it (`the
 * scaling of group web of web`), `check` is the command that tells whether it took effect.
 */
export interface OneShotWrite {
  what: string;
  check: string;
}

/** What a command run by withClient gets beside its client. */
export interface ClientRun {
  /** The one-shot write's interrupt, for a question the command asks first (one handler, one line). */
  interrupt?: Interrupt;
  /**
   * Sends the one-shot write: from here on, an interruption or a lost answer may have let it act,
   * and after it is accepted, a later failure (a read that follows it) does not undo it.
   */
  send<R>(request: () => Promise<R>): Promise<R>;
  /**
   * Standard output as it was, for bytes a command passes on whole (`state pull`'s state file): the
   * masking of echoed tokens is for what commands say, and must never alter data.
   */
  rawStdout: Io['stdout'];
}

/**
 * Runs a one-off operator command with one service's client from the environment, and closes the
 * connection pool afterwards whatever happens. For a one-shot write, Ctrl-C (or SIGTERM) aborts its
 * requests and ends it with 130 (143), saying whether the write had been sent; one that may have
 * acted (interrupted while sent, a 502/503/504 or a connection lost after sending it) or that was
 * accepted before a later step failed says so, and how to check before running it again (an
 * interrupted `job scale` that had landed ended in silence).
 */
export async function withClient<C extends ServiceClient, T>(
  io: Io,
  service: ServiceDefinition<C>,
  fn: (client: C, run: ClientRun) => Promise<T>,
  write?: OneShotWrite,
): Promise<T> {
  const http = runHttpOptions(io);
  const sent: { phase: 'before' | 'sending' | 'accepted' } = { phase: 'before' };
  const run: ClientRun = {
    rawStdout: io.stdout,
    async send(request) {
      sent.phase = 'sending';
      const answer = await request();
      sent.phase = 'accepted';
      return answer;
    },
  };
  let connections: ServiceConnections | undefined;
  // What the command prints of live objects (`role get`'s Description) is masked of the token when
  // the service showed it in an answer, as a plan masks it: a service that stored it printed it.
  const restore = maskEchoedTokens(io, () => connections?.echoedCredentials() ?? []);
  // Only a one-shot write watches signals here: a command that holds a lock (a state push) has its
  // own interrupt, whose unlock must not be aborted by a signal every request of the client hears.
  const interrupt = write ? onInterrupt(io) : undefined;
  try {
    if (interrupt) run.interrupt = interrupt;
    connections = new ServiceConnections(io.env, [service], [], {
      http,
      ...(interrupt ? { signal: interrupt.signal } : {}),
    });
    return await fn(connections.client(service), run);
  } catch (error) {
    if (!write) throw error;
    const check = `check with \`${write.check}\` before running it again`;
    if (interrupt?.exitCode !== undefined)
      throw new CliError(
        sent.phase === 'before'
          ? `interrupted before ${write.what} was sent: nothing was changed`
          : sent.phase === 'sending'
            ? `interrupted: ${write.what} may have reached the service and taken effect: ${check}`
            : `interrupted after the service accepted ${write.what}: ${check}`,
        interrupt.exitCode,
      );
    if (sent.phase === 'sending' && mayHaveActed(error))
      throw withNote(error, `${write.what} may have taken effect all the same: ${check}`);
    if (sent.phase === 'accepted')
      throw withNote(error, `the service had accepted ${write.what} before this failure: ${check}`);
    throw error;
  } finally {
    restore();
    interrupt?.dispose();
    await connections?.close();
  }
}

/**
 * Has `io`'s stdout and stderr scrub `tokens()` (in every encoding the scrubber knows) from each
 * text written, until the returned function puts them back. The command reads `io.stdout` when it
 * writes, so it needs no change; the streams' other properties (isTTY, columns) stay as they are.
 */
function maskEchoedTokens(io: Io, tokens: () => string[]): () => void {
  const { stdout, stderr } = io;
  const masking = (stream: Io['stdout']): Io['stdout'] =>
    new Proxy(stream, {
      get(target, prop) {
        if (prop === 'write')
          return (chunk: unknown, ...rest: unknown[]) => {
            const found = tokens();
            const text = typeof chunk === 'string' && found.length > 0 ? scrubSecrets(chunk, found) : chunk;
            return (target.write as (...args: unknown[]) => boolean)(text, ...rest);
          };
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  io.stdout = masking(stdout);
  io.stderr = masking(stderr);
  return () => {
    io.stdout = stdout;
    io.stderr = stderr;
  };
}

/**
 * Whether a failed write may have been carried out: its answer lost to a gateway (502, 503, 504), a
 * response timeout or a connection broken after sending. A 500 is not among them: the scheduler
 * answers a write it refuses (a job that is not there, a version it cannot revert to) with a 500.
 */
function mayHaveActed(error: unknown): boolean {
  const status =
    (error as { kind?: string; status?: number }).kind === 'status'
      ? (error as { status?: number }).status
      : undefined;
  if (status !== undefined) return status === 502 || status === 503 || status === 504;
  return answerLost(error);
}

/** The error with one more line of advice, its class kept (exit codes and renderers go by it). */
export function withNote(error: unknown, note: string): unknown {
  if (!(error instanceof Error)) return error;
  const before = error.message;
  error.message = `${before}\n${note}`;
  // The stack begins with the message as it was made: CONVERGE_DEBUG's trace showed the old text.
  if (typeof error.stack === 'string' && error.stack.includes(before))
    error.stack = error.stack.replace(before, error.message);
  return error;
}
