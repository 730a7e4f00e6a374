/**
 * The two checks every service makes when it starts: that its saved state reads back in the shape it
 * wrote (else the sandbox refuses to start rather than drop or misread data), and that the config
 * section seeds cleanly (else every problem is listed with its path in the config file).
 */
import type { ServiceConfigIssue } from '../../core/service.js';

/** The saved state, checked by `isSnapshot`; undefined for a fresh data folder (or none). */
export function restoredSnapshot<T>(
  service: string,
  persisted: unknown,
  isSnapshot: (value: unknown) => value is T,
): T | undefined {
  if (persisted === undefined) return undefined;
  if (!isSnapshot(persisted)) throw new Error(`${service} state file has an unexpected shape`);
  return persisted;
}

/** Throws one error listing every seed problem as `<service>.<path>: <message>`. */
export function refuseSeedIssues(service: string, what: string, issues: ServiceConfigIssue[]): void {
  if (issues.length === 0) return;
  const lines = issues.map((i) => `  ${service}.${i.path.join('.')}: ${i.message}`);
  throw new Error(`cannot seed ${what} from the config:\n${lines.join('\n')}`);
}
