/**
 * Parses one manifest file's text into YAML documents with positions. Syntax errors are reported
 * with yaml's own message at yaml's own position; a document with errors is left out (yaml still
 * returns partial content for it, which must not be validated as if it were what the user meant).
 */
import { Composer, type Document, isScalar, Lexer, LineCounter, Parser, visit } from 'yaml';
import { MAX_NESTING_DEPTH } from './limits.js';
import { NestingGuard, type NestingViolation } from './nesting.js';
import { DocumentPositions } from './positions.js';
import type { ManifestProblem } from './types.js';

export interface ParsedDocument {
  doc: Document.Parsed;
  positions: DocumentPositions;
  /** Which of the file's documents this is (counting every one yaml composed): to find it again. */
  index: number;
}

export interface ParsedFile {
  /**
   * The file's usable documents, composed one at a time as they are taken, so that a caller that
   * is done with one lets it go before the next is built: a file of 10,000 documents never holds
   * all their syntax trees at once (they were most of a large plan's memory and of its GC time).
   */
  documents: Generator<ParsedDocument, void, undefined>;
  /** YAML problems of the documents taken so far. */
  problems: ManifestProblem[];
  /**
   * Once `documents` is done: set when the file nests too deep. Then the file's other problems, and
   * whatever its earlier documents gave, are to be dropped: the file is not read further.
   */
  tooDeep(): ManifestProblem | undefined;
}

const COMPOSE_OPTIONS = {
  // Core schema even under a `%YAML 1.1` directive: `yes`/`no`/`on` stay strings.
  schema: 'core',
  // YAML 1.1 extras (!!binary, !!set, !!timestamp...) are not manifest values.
  resolveKnownTags: false,
  // Merge keys (`<<: *defaults`) are ordinary YAML in Kubernetes-style manifests. prepare.ts checks
  // what they merge, and to-value.ts bounds how far they expand.
  merge: true,
  // yaml's duplicate-key check compares each key with every earlier one (100k keys took minutes);
  // prepare.ts checks duplicates with a Set instead.
  uniqueKeys: false,
} as const;

export function parseManifestText(file: string, text: string): ParsedFile {
  const lineCounter = new LineCounter();
  const guarded = guardedTokens(text, lineCounter);
  const problems: ManifestProblem[] = [];

  function* documents(): Generator<ParsedDocument, void, undefined> {
    // What yaml's `parseAllDocuments` does, with the nesting guard between its lexer and its parser.
    let index = -1;
    for (const doc of new Composer(COMPOSE_OPTIONS).compose(guarded.tokens())) {
      // The document being composed when the guard stopped the stream is cut short: not a document.
      if (guarded.violation()) return;
      index++;
      const positions = new DocumentPositions(file, doc, lineCounter, text);
      // Unresolved tags are warnings to yaml; prepare.ts reports every disallowed tag itself.
      const issues = [
        ...doc.errors,
        ...doc.warnings.filter((warning) => warning.code !== 'TAG_RESOLVE_FAILED'),
      ];
      for (const issue of issues) {
        const opening = unclosedQuoteOf(doc, issue);
        problems.push(
          opening === undefined
            ? { position: positions.at(issue.pos[0]), message: `YAML: ${describeYamlIssue(issue)}` }
            : {
                position: positions.at(opening),
                message: `YAML: the quoted text that starts here is never closed: it runs on to the end of the file (add its closing ${text[opening]})`,
              },
        );
      }
      if (issues.length > 0) continue;
      // Empty documents (`---` followed by nothing, or only comments) are skipped; yaml gives them
      // a null scalar as contents.
      if (doc.contents === null || (isScalar(doc.contents) && doc.contents.value === null)) continue;
      yield { doc, positions, index };
    }
  }

  return {
    documents: documents(),
    problems,
    tooDeep() {
      const violation = guarded.violation();
      return violation
        ? {
            position: { file, ...violation },
            message: `values are nested more than ${MAX_NESTING_DEPTH} levels deep; the file is not read further`,
          }
        : undefined;
    },
  };
}

/**
 * Where the quoted value that yaml found unclosed opens. yaml reports a missing closing quote where
 * the file ends, which may be hundreds of lines and several documents after the typo (the value
 * swallowed them all); the opening quote is the line to fix.
 */
function unclosedQuoteOf(
  doc: Document.Parsed,
  issue: { code: string; pos: [number, number] },
): number | undefined {
  if (issue.code !== 'MISSING_CHAR') return undefined;
  let opening: number | undefined;
  visit(doc, {
    Scalar(_, node) {
      const quoted = node.type === 'QUOTE_DOUBLE' || node.type === 'QUOTE_SINGLE';
      // The unclosed value is the one whose range reaches the reported end.
      if (quoted && node.range && node.range[0] < issue.pos[0] && node.range[1] >= issue.pos[0]) {
        opening = node.range[0];
        return visit.BREAK;
      }
      return undefined;
    },
  });
  return opening;
}

function describeYamlIssue(issue: { message: string; code: string }): string {
  const message = issue.message.replace(/\s+/g, ' ').trim();
  // yaml's message for its own stack overflow guard is technical; say what it means.
  if (issue.code === 'RESOURCE_EXHAUSTION') return `input is too deeply nested or too large (${message})`;
  // Most often a plain value holding ": " (`Description: Team: 0`), which YAML reads as a mapping.
  if (/^Nested mappings are not allowed in compact mappings/.test(message))
    return `${message} (a value that holds ": " must be quoted: Description: "Team: 0")`;
  return message;
}

/**
 * yaml's CST tokens for `text`, lexed once: each lexer token passes the nesting guard before yaml's
 * parser (which recurses per level) sees it, and the stream ends at the first token that is too
 * deep. Lexing the text a second time for the guard alone cost about an eighth of a large plan.
 */
function guardedTokens(text: string, lineCounter: LineCounter) {
  const guard = new NestingGuard(MAX_NESTING_DEPTH);
  let violation: NestingViolation | undefined;
  function* tokens() {
    const parser = new Parser(lineCounter.addNewLine);
    // As Parser.parse does: the first line starts at offset 0.
    lineCounter.addNewLine(0);
    for (const lexeme of new Lexer().lex(text)) {
      violation = guard.next(lexeme);
      if (violation) return;
      yield* parser.next(lexeme);
    }
    yield* parser.end();
  }
  return { tokens, violation: () => violation };
}
