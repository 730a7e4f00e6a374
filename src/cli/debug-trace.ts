/**
 * What `CONVERGE_DEBUG=1` adds under an error: where it was thrown, and the chain of causes. A stack's
 * first line repeats the message, which can be any text (a cause from a library, a message built
 * before a scrub): so only the frames are printed, each cause's message goes through the scrubber,
 * and everything is scrubbed of the credentials the process holds (its `CONVERGE_*_TOKEN` values
 * and the state key) once more before it is written.
 */
import { scrubSecrets } from '../common/scrub.js';

/** The credentials the process holds, from its environment: never printed, debug or not. */
export function environmentSecrets(env: NodeJS.ProcessEnv): string[] {
  return Object.entries(env)
    .filter(([name]) => /^CONVERGE_\w+_TOKEN$/.test(name) || name === 'CONVERGE_STATE_KEY')
    .map(([, value]) => value)
    .filter((value): value is string => !!value);
}

/** The frames of `error` and of each cause (at most 5 deep), without any stack's own message line. */
export function debugTrace(error: Error, secrets: readonly string[]): string {
  const lines = frames(error);
  let cause: unknown = error.cause;
  for (let depth = 0; cause !== undefined && depth < 5; depth++) {
    const name = cause instanceof Error ? cause.name : typeof cause;
    const message = cause instanceof Error ? cause.message : String(cause);
    lines.push(`Caused by ${name}: ${message}`);
    if (cause instanceof Error) lines.push(...frames(cause));
    cause = cause instanceof Error ? cause.cause : undefined;
  }
  return scrubSecrets(lines.join('\n'), secrets);
}

function frames(error: Error): string[] {
  return (error.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line));
}
