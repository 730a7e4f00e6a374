/**
 * An object's name and namespace are its address: every plan line, log line, JSON change and lock
 * names them, and a masked address would leave the reader unable to tell objects apart. So a secret
 * (a value read from a sensitive variable, a connection's token) may not be part of one; it is
 * refused at its line, before anything is printed, rather than shown in the clear everywhere.
 */
import { MIN_SENSITIVE_VALUE_CHARS } from '../common/allow-list.js';
import type { Manifest, ManifestProblem } from './types.js';

/**
 * `sources`: each secret the manifest holds (a sensitive variable's value, a connection's token),
 * with where it came from in words (`the token of Connection "eu"`).
 */
export function sensitiveIdentityProblems(
  manifest: Manifest,
  sources: ReadonlyMap<string, string>,
): ManifestProblem[] {
  const secrets = [...sources].filter(([value]) => value.trim().length >= MIN_SENSITIVE_VALUE_CHARS);
  if (secrets.length === 0) return [];
  const problems: ManifestProblem[] = [];
  for (const resource of manifest.resources) {
    for (const [field, text] of [
      ['name', resource.name],
      ['namespace', resource.namespace],
    ] as const) {
      if (text === undefined) continue;
      const found = secrets.find(([value]) => text.includes(value));
      if (!found) continue;
      problems.push({
        position: resource.locate(`/metadata/${field}`),
        // Where the secret came from, never its value.
        message: `metadata.${field} holds ${found[1]}: an object's ${field} shows in every plan, log and address and cannot be masked; take it from a value that is not a secret`,
      });
    }
  }
  return problems;
}
