/**
 * Lines a command wants said after the error that stopped it (`Plan not saved to FILE`): the error
 * itself is printed by the program's one reporter, first, and these follow it, in order.
 */
const notes = new WeakMap<object, string[]>();

export function sayAfterError(error: unknown, line: string): void {
  if (typeof error !== 'object' || error === null) return;
  notes.set(error, [...(notes.get(error) ?? []), line]);
}

export function linesAfterError(error: unknown): readonly string[] {
  return typeof error === 'object' && error !== null ? (notes.get(error) ?? []) : [];
}
