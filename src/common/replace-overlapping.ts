/**
 * Replaces every match of a global pattern with `marker`, overlapping matches included: one merged
 * stretch of text per group of matches that overlap or touch. `String.replace` resumes after each
 * match, so of two secrets that overlap in the text ("abcdef123" and "123xyz789" in
 * "abcdef123xyz789") the second's tail ("xyz789") stayed in view.
 */
export function replaceOverlapping(text: string, pattern: RegExp, marker: string): string {
  if (!pattern.global) throw new Error('replaceOverlapping needs a global pattern');
  pattern.lastIndex = 0;
  let match = pattern.exec(text);
  // The common case, text with no secret at all: one scan, the text itself back.
  if (!match) return text;
  const stretches: [number, number][] = [];
  while (match) {
    const start = match.index;
    const end = start + match[0].length;
    const last = stretches[stretches.length - 1];
    if (last && start <= last[1]) last[1] = Math.max(last[1], end);
    else stretches.push([start, end]);
    // From the next character, not from the end of this match: a match may start inside this one.
    // (An empty match would otherwise loop here; the patterns hold no empty alternative.)
    pattern.lastIndex = start + 1;
    match = pattern.exec(text);
  }
  let out = '';
  let from = 0;
  for (const [start, end] of stretches) {
    out += text.slice(from, start) + marker;
    from = end;
  }
  return out + text.slice(from);
}

/**
 * A pattern source that matches any of `texts` literally, longest first so a text containing another
 * is matched whole. Shared by every scrubber that builds one pattern from many secrets.
 */
export function literalAlternation(texts: readonly string[]): string {
  return [...texts]
    .sort((a, b) => b.length - a.length)
    .map((t) => t.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'))
    .join('|');
}
