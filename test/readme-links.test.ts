/**
 * The README's links go somewhere: every `(#anchor)` names a heading as GitHub slugs it, and every
 * relative link names a file or folder of the repository. A renamed heading (a command's flags
 * changed) otherwise leaves a link that silently scrolls nowhere.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');

/** GitHub's heading anchor: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function slugs(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const m = fenced ? null : /^#{1,6}\s+(.*)$/.exec(line);
    if (!m) continue;
    const base = m[1]!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

function links(markdown: string): string[] {
  const withoutCode = markdown.replace(/```[\s\S]*?```/g, '');
  return [...withoutCode.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!);
}

describe.each(['README.md', 'examples/kubernetes/README.md'])('%s', (file) => {
  const text = readFileSync(path.join(ROOT, file), 'utf8');

  it('links only to headings that exist', () => {
    const anchors = slugs(text);
    const broken = links(text).filter((l) => l.startsWith('#') && !anchors.has(l.slice(1)));
    expect(broken).toEqual([]);
  });

  it('links only to files that exist', () => {
    const broken = links(text)
      .filter((l) => !/^(#|[a-z]+:)/.test(l))
      .filter((l) => !existsSync(path.resolve(ROOT, path.dirname(file), l.split('#')[0]!)));
    expect(broken).toEqual([]);
  });
});
