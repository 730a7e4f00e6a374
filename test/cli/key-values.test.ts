/**
 * `show` and `status` commands print `Key  value` blocks: a value with several lines (a lock reason
 * typed over two lines, a role's policies) stays under its column, and a service's control characters
 * cannot rewrite the block.
 */
import { describe, expect, it } from 'vitest';
import { keyValues } from '../../src/cli/table.js';

describe('keyValues', () => {
  it('keeps the lines of a multi-line value under its column', () => {
    expect(
      keyValues([
        ['Locked', 'yes, by user bob'],
        ['Lock reason', 'release\nfreeze'],
        ['Resources', '3'],
      ]),
    ).toBe(
      ['Locked       yes, by user bob', 'Lock reason  release', '             freeze', 'Resources    3'].join(
        '\n',
      ),
    );
  });

  it('shows control characters from a service escaped, so no line is rewritten', () => {
    const out = keyValues([['Description', 'ok\u001b[2K\rforged']]);
    expect(out).not.toMatch(/[\u001b\r]/);
    expect(out).toContain('Description  ok\\u001b[2K');
  });
});
