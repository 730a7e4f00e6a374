/**
 * The attribute lines of one change, shared by the terminal and markdown renderings: what is added,
 * removed or changed, nested in blocks (blocks.ts), with names padded so the `=` signs line up.
 */
import type { Change } from '../types.js';
import { diffTreeLines, objectLines } from './blocks.js';

export interface DiffLine {
  /** `+`, `-` or `~`, or ' ' for context (a block's closing brace, an unchanged line of a text). */
  sign: '+' | '-' | '~' | ' ';
  /** How deep in nested blocks the line sits: 0 for the object's own attributes. */
  depth: number;
  text: string;
  /** Forces the object to be replaced. */
  forcesReplacement?: boolean;
  /** A remark from the kind, shown as a trailing comment. */
  note?: string;
}

export function changeLines(change: Change): DiffLine[] {
  switch (change.action) {
    case 'create':
      return objectLines(change.after ?? {}, '+', 0);
    case 'delete':
      return objectLines(change.before ?? {}, '-', 0);
    case 'update':
    case 'replace':
      return diffTreeLines(change.diffs, change.before);
    case 'noop':
      return [];
  }
}

export function heading(change: Change): string {
  const ns =
    change.key.namespace !== undefined
      ? ` in ${change.namespaceLabel ?? 'namespace'} ${change.key.namespace}`
      : '';
  const conn = change.key.connection !== undefined ? ` on connection ${change.key.connection}` : '';
  return `${change.key.kind} "${change.key.name}"${ns}${conn}`;
}
