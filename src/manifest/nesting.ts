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

/** Runs the guard over a whole text on its own; parse.ts feeds it the tokens yaml parses instead. */
export function findExcessiveNesting(text: string, maxDepth: number): NestingViolation | undefined {
  const guard = new NestingGuard(maxDepth);
  for (const token of new Lexer().lex(text)) {
    const violation = guard.next(token);
    if (violation) return violation;
  }
  return undefined;
}

/**
 * Tracks the depth token by token, so that the one lexer pass that feeds yaml's parser also guards
 * it: the parser never receives the token that goes too deep.
 */
export class NestingGuard {
  private readonly blockColumns: number[] = [];
  private flowDepth = 0;
  private line = 1;
  private lineStartOffset = 0;
  private offset = 0;
  private atLineStart = true;
  /** Column where the current block node on this line starts (after any `- ` / `? ` indicators). */
  private nodeColumn = -1;
  private nextIsScalarText = false;

  constructor(private readonly maxDepth: number) {}

  /** Takes the next lexer token; returns where it went too deep, if it did. */
  next(token: string): NestingViolation | undefined {
    if (token === DOCUMENT_MARKER || token === FLOW_END_MARKER) return undefined;
    if (token === SCALAR_MARKER) {
      this.nextIsScalarText = true;
      return undefined;
    }
    const col = this.offset - this.lineStartOffset;
    const kind = this.nextIsScalarText ? 'content' : classify(token);
    this.nextIsScalarText = false;

    if (kind === 'document') {
      this.blockColumns.length = 0;
      this.flowDepth = 0;
    } else if (kind === 'flow-open') {
      if (this.flowDepth === 0) this.startContent(col);
      this.flowDepth++;
    } else if (kind === 'flow-close') {
      this.flowDepth = Math.max(0, this.flowDepth - 1);
    } else if (this.flowDepth === 0 && kind === 'block-indicator') {
      this.popColumnsFrom(col);
      this.blockColumns.push(col);
      this.atLineStart = false;
      this.nodeColumn = -1;
    } else if (this.flowDepth === 0 && kind === 'value-indicator') {
      // `key:` opens a mapping level that starts where the key starts.
      const keyColumn = this.nodeColumn >= 0 ? this.nodeColumn : col;
      this.popColumnsFrom(keyColumn);
      this.blockColumns.push(keyColumn);
      this.atLineStart = false;
      this.nodeColumn = -1;
    } else if (this.flowDepth === 0 && kind === 'content') {
      this.startContent(col);
    }

    if (this.blockColumns.length + this.flowDepth > this.maxDepth) return { line: this.line, col: col + 1 };

    this.offset += token.length;
    const lastNewline = token.lastIndexOf('\n');
    if (lastNewline >= 0) {
      for (let i = token.indexOf('\n'); i >= 0; i = token.indexOf('\n', i + 1)) this.line++;
      this.lineStartOffset = this.offset - token.length + lastNewline + 1;
      this.atLineStart = true;
      this.nodeColumn = -1;
    }
    return undefined;
  }

  private popColumnsFrom(col: number): void {
    const columns = this.blockColumns;
    while (columns.length > 0 && columns[columns.length - 1]! >= col) columns.pop();
  }

  private startContent(col: number): void {
    if (this.atLineStart) {
      // The first node on a line closes every block level that started at or right of it.
      this.popColumnsFrom(col);
      this.atLineStart = false;
    }
    if (this.nodeColumn < 0) this.nodeColumn = col;
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
