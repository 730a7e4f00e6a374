/**
 * Finds input nested deeper than a limit before yaml parses it. yaml's parser and composer recurse
 * per level: on 100k `[` they take seconds and report hundreds of stack-overflow errors, and on 1M
 * they ran the process out of memory. yaml's lexer, by contrast, is a linear generator, so we walk
 * its tokens, keep an approximate depth, and stop at the first place that is too deep.
 *
 * The depth is exact for flow collections (`[`, `{`). For block collections it is estimated from
 * indentation: each block level starts at a column greater than its parent's, so a stack of start
 * columns tracks it, and every `- ` or `? ` on one line (`- - - x`) opens a level of its own. The
 * estimate can undercount (`key:` followed by `- item` at the same indentation shares a column), by
 * at most a factor of two, which the limit allows for.
 */
import { Lexer } from 'yaml';

// Zero-width markers the lexer emits (see yaml's cst.ts); they are not part of the source text.
const DOCUMENT_MARKER = '\x02';
const SCALAR_MARKER = '\x1f';
const FLOW_END_MARKER = '\x18';

export interface NestingViolation {
  /** 1-based line and column of the token that went too deep. */
  line: number;
  col: number;
}

export function findExcessiveNesting(text: string, maxDepth: number): NestingViolation | undefined {
  const blockColumns: number[] = [];
  let flowDepth = 0;
  let line = 1;
  let lineStartOffset = 0;
  let offset = 0;
  let atLineStart = true;
  // Column where the current block node on this line starts (after any `- ` / `? ` indicators).
  let nodeColumn = -1;
  let nextIsScalarText = false;

  const popColumnsFrom = (col: number) => {
    while (blockColumns.length > 0 && blockColumns[blockColumns.length - 1]! >= col) blockColumns.pop();
  };

  for (const token of new Lexer().lex(text)) {
    if (token === DOCUMENT_MARKER || token === FLOW_END_MARKER) continue;
    if (token === SCALAR_MARKER) {
      nextIsScalarText = true;
      continue;
    }
    const col = offset - lineStartOffset;
    const kind = nextIsScalarText ? 'content' : classify(token);
    nextIsScalarText = false;

    if (kind === 'document') {
      blockColumns.length = 0;
      flowDepth = 0;
    } else if (kind === 'flow-open') {
      if (flowDepth === 0) startContent(col);
      flowDepth++;
    } else if (kind === 'flow-close') {
      flowDepth = Math.max(0, flowDepth - 1);
    } else if (flowDepth === 0 && kind === 'block-indicator') {
      popColumnsFrom(col);
      blockColumns.push(col);
      atLineStart = false;
      nodeColumn = -1;
    } else if (flowDepth === 0 && kind === 'value-indicator') {
      // `key:` opens a mapping level that starts where the key starts.
      const keyColumn = nodeColumn >= 0 ? nodeColumn : col;
      popColumnsFrom(keyColumn);
      blockColumns.push(keyColumn);
      atLineStart = false;
      nodeColumn = -1;
    } else if (flowDepth === 0 && kind === 'content') {
      startContent(col);
    }

    if (blockColumns.length + flowDepth > maxDepth) return { line, col: col + 1 };

    offset += token.length;
    const lastNewline = token.lastIndexOf('\n');
    if (lastNewline >= 0) {
      for (let i = token.indexOf('\n'); i >= 0; i = token.indexOf('\n', i + 1)) line++;
      lineStartOffset = offset - token.length + lastNewline + 1;
      atLineStart = true;
      nodeColumn = -1;
    }
  }
  return undefined;

  function startContent(col: number) {
    if (atLineStart) {
      // The first node on a line closes every block level that started at or right of it.
      popColumnsFrom(col);
      atLineStart = false;
    }
    if (nodeColumn < 0) nodeColumn = col;
  }
}

type TokenKind =
  'document' | 'flow-open' | 'flow-close' | 'block-indicator' | 'value-indicator' | 'content' | 'space';

function classify(token: string): TokenKind {
  switch (token) {
    case '---':
    case '...':
      return 'document';
    case '[':
    case '{':
      return 'flow-open';
    case ']':
    case '}':
      return 'flow-close';
    case '-':
    case '?':
      return 'block-indicator';
    case ':':
      return 'value-indicator';
    case ',':
    case '':
      return 'space';
  }
  const first = token[0];
  // Whitespace, line breaks, comments and directives carry no structure.
  if (first === ' ' || first === '\t' || first === '\n' || first === '\r' || first === '#' || first === '%') {
    return 'space';
  }
  if (first === '\uFEFF') return 'space';
  return 'content';
}
