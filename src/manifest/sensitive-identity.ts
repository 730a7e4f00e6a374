/**
 * An object's name and namespace are its address: every plan line, log line, JSON change and lock
 * names them, and a masked address would leave the reader unable to tell objects apart. So a secret
 * (a value read from a sensitive variable, a connection's token) may not be part of one; it is
 * refused at its line, before anything is printed, rather than shown in the clear everywhere.
 */
import { MIN_SENSITIVE_VALUE_CHARS } from '../common/allow-list.js';
import { scrubSecrets } from '../common/scrub.js';
import { namespaceFieldOf } from '../resources/contract.js';
import type { ManifestKind } from './kinds.js';
import type { Manifest, ManifestProblem } from './types.js';

/**
 * `sources`: each secret the manifest holds (a sensitive variable's value, a connection's token from
 * outside the manifest), with where it came from in words (`the token of Connection "eu"`). Only a
 * name or namespace filled in from a variable or file is looked at: one written in the manifest is
 * in the open already, and `root-readers` beside a `root` token protects nothing by being refused.
 */
export function sensitiveIdentityProblems(
  manifest: Manifest,
  sources: ReadonlyMap<string, string>,
  kinds: readonly ManifestKind[],
): ManifestProblem[] {
  const secrets = [...sources].filter(([value]) => value.trim().length >= MIN_SENSITIVE_VALUE_CHARS);
  if (secrets.length === 0) return [];
  const problems: ManifestProblem[] = [];
  for (const resource of manifest.resources) {
    if (resource.sensitivePointers.size === 0) continue;
    // The kind's own word for its namespace (`mount`, `organization`), as the document writes it.
    const namespaceField = namespaceFieldOf(kinds.find((k) => k.kind === resource.kind));
    for (const [field, text] of [
      ['name', resource.name],
      [namespaceField, resource.namespace],
      ['connection', resource.connection],
    ] as const) {
      const pointer = `/metadata/${field}`;
      if (text === undefined || !resource.sensitivePointers.has(pointer)) continue;
      const found = secrets.find(([value]) => text.includes(value));
      if (!found) continue;
      problems.push({
        position: resource.locate(pointer),
        // Where the secret came from, never its value.
        message: `metadata.${field} holds ${found[1]}: an object's ${field === 'name' ? 'name' : field} is part of its address, shown in every plan, log and lock, and cannot be masked; take it from a value that is not a secret`,
      });
    }
  }
  // A Connection's settings become its objects' addresses (a workspace connection's `organization`
  // is the namespace of every workspace on it): a secret there printed in every address, as above.
  for (const connection of manifest.connections) {
    for (const [key, text] of Object.entries(connection.settings)) {
      const found = secrets.find(([value]) => text.includes(value));
      if (!found) continue;
      const at = connection.settingFromOutside;
      problems.push({
        position: at?.key === key ? at.position : connection.source,
        message: `spec.${key} of Connection "${connection.name}" holds ${found[1]}: it is part of the address of every object on the connection, shown in every plan, log and lock, and cannot be masked; take it from a value that is not a secret`,
      });
    }
  }
  return problems;
}

/**
 * `problems` with the manifest's secrets scrubbed from their messages, in every encoding: a message
 * may quote what a document says of itself (an address declared twice), and a secret in it, refused
 * at its own line, must not show there either.
 */
export function withoutSecrets<T extends ManifestProblem>(
  problems: readonly T[],
  secrets: readonly string[] | undefined,
): T[] {
  const values = (secrets ?? []).filter((v) => v.trim().length >= MIN_SENSITIVE_VALUE_CHARS);
  if (values.length === 0) return [...problems];
  return problems.map((p) => ({ ...p, message: scrubSecrets(p.message, values) }));
}
