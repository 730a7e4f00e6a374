/**
 * The reason a run gives when it locks a shared inventory: enough for whoever finds the lock to tell
 * which run holds it, and whether that run is gone (a crashed CI job): the CI job's URL when the
 * environment gives one, the host, the process and the start time.
 */
import os from 'node:os';

/** The CI job's URL: GitHub Actions' run, GitLab CI's job; undefined elsewhere. */
export function ciJobUrl(env: NodeJS.ProcessEnv): string | undefined {
  const { GITHUB_SERVER_URL, GITHUB_REPOSITORY, GITHUB_RUN_ID, CI_JOB_URL } = env;
  if (GITHUB_SERVER_URL && GITHUB_REPOSITORY && GITHUB_RUN_ID)
    return `${GITHUB_SERVER_URL}/${GITHUB_REPOSITORY}/actions/runs/${GITHUB_RUN_ID}`;
  return CI_JOB_URL || undefined;
}

export function lockReason(command: string, env: NodeJS.ProcessEnv, now = new Date()): string {
  const ci = ciJobUrl(env);
  return `${command}${ci ? ` in ${ci}` : ''} on host ${os.hostname()}, pid ${process.pid}, since ${now.toISOString()}`;
}

/**
 * The host and pid a lock reason written by `lockReason` names, so whoever finds the lock can check
 * whether its holder still runs. The reason is text anyone with access may have set: only a strict
 * match counts, and anything else is a holder that cannot be checked.
 */
export function holderOfReason(reason: string): { host: string; pid: number } | undefined {
  const match = / on host ([A-Za-z0-9._-]{1,253}), pid (\d{1,10}), since [^,]*$/.exec(reason);
  if (!match) return undefined;
  const pid = Number(match[2]);
  if (!Number.isSafeInteger(pid) || pid <= 0) return undefined;
  return { host: match[1]!, pid };
}

/**
 * Whether a lock's holder still runs: only a process on this host can be checked ('elsewhere' for
 * one on another host, which may or may not be gone).
 */
export function holderLiveness(holder: { pid: number; host: string }): 'alive' | 'dead' | 'elsewhere' {
  if (holder.host !== os.hostname()) return 'elsewhere';
  if (holder.pid === process.pid) return 'alive';
  try {
    process.kill(holder.pid, 0);
    return 'alive';
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'ESRCH' ? 'dead' : 'alive';
  }
}
