/**
 * The registry of resource kinds. The planner, the applier and the manifest schema know kinds only
 * through this list: adding a kind is one module and one line here.
 */
import { aclRoleKind } from './acl-role.js';
import { workspaceKind } from './workspace/index.js';
import type { AnyResourceKind } from './contract.js';

export const kinds: readonly AnyResourceKind[] = [aclRoleKind, workspaceKind];

const byName = new Map(kinds.map((k) => [k.kind, k]));

export function kindByName(kind: string): AnyResourceKind | undefined {
  return byName.get(kind);
}
