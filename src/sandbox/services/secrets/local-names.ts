/**
 * The key a local group or user is stored under. Spec (directory configuration,
 * `case_sensitive_names`): "when false, user and group names in local definitions are lower-cased for
 * matching". One function, so that every path that finds a local definition by name (read, write,
 * user delete, login, seeding) folds the same way; a path that folds differently from the others
 * turns a write, a delete or a login into a silent no-op on another entry.
 */
import type { LdapConfigRecord } from './model.js';

export function localNameKey(config: Pick<LdapConfigRecord, 'case_sensitive_names'>, name: string): string {
  return config.case_sensitive_names ? name : name.toLowerCase();
}
