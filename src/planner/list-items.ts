/**
 * Diffs of the attributes a kind declares as lists of items (`RenderDetails.listAttributes`): the
 * kinds compare such a list as a set (`diffValues`), so an `add` or `remove` at the list's own path
 * is one item coming or going while the others stay. Marking them `item` tells the renderers (and
 * `--json` readers) so, without their knowing any kind: `~ groups = [ - "ops", + "dev" ]` rather than
 * `- groups = "ops"`, which reads as the whole attribute removed.
 */
import type { AttributeDiff } from '../resources/contract.js';

export function markListItems(lists: readonly string[], diffs: AttributeDiff[]): AttributeDiff[] {
  if (lists.length === 0) return diffs;
  const names = new Set(lists);
  return diffs.map((d) => (d.op !== 'change' && names.has(d.path) ? { ...d, item: true } : d));
}
