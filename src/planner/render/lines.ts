/**
 * The attribute lines of one change, shared by the terminal and markdown renderings: what is added,
 * removed or changed, with names padded so the `=` signs line up.
 */
import type { AttributeDiff } from '../../resources/contract.js';
import type { Change } from '../types.js';
import { formatValue, SENSITIVE_CHANGED } from './format.js';

export interface DiffLine {
  /** `+`, `-` or `~`, or ' ' for context. */
  sign: '+' | '-' | '~' | ' ';
  text: string;
  /** Forces the object to be replaced. */
  forcesReplacement?: boolean;
  /** A remark from the kind, shown as a trailing comment. */
  note?: string;
}

function pad(names: string[]): (name: string) => string {
  const width = Math.max(0, ...names.map((n) => n.length));
  return (name) => name.padEnd(width);
}

function attributeLines(attrs: Record<string, unknown>, sign: '+' | '-'): DiffLine[] {
  const names = Object.keys(attrs);
  const p = pad(names);
  return names.map((n) => ({ sign, text: `${p(n)} = ${formatValue(attrs[n])}` }));
}

function diffLine(d: AttributeDiff, p: (name: string) => string): DiffLine {
  const forces = {
    ...(d.forcesReplacement ? { forcesReplacement: true } : {}),
    ...(d.note ? { note: d.note } : {}),
  };
  switch (d.op) {
    case 'add':
      return { sign: '+', text: `${p(d.path)} = ${formatValue(d.after)}`, ...forces };
    case 'remove':
      return { sign: '-', text: `${p(d.path)} = ${formatValue(d.before)}`, ...forces };
    case 'change':
      // Neither side of a secret can be shown; saying that it changed is all there is to say.
      return {
        sign: '~',
        text: d.sensitive
          ? `${p(d.path)} = ${SENSITIVE_CHANGED}`
          : `${p(d.path)} = ${formatValue(d.before)} -> ${formatValue(d.after)}`,
        ...forces,
      };
  }
}

export function changeLines(change: Change): DiffLine[] {
  switch (change.action) {
    case 'create':
      return attributeLines(change.after ?? {}, '+');
    case 'delete':
      return attributeLines(change.before ?? {}, '-');
    case 'update':
    case 'replace': {
      const p = pad(change.diffs.map((d) => d.path));
      return change.diffs.map((d) => diffLine(d, p));
    }
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
