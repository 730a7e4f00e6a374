/**
 * Parses one manifest file's text into YAML documents with positions. Syntax errors are reported
 * with yaml's own message at yaml's own position; a document with errors is left out (yaml still
 * returns partial content for it, which must not be validated as if it were what the user meant).
 */
import { Composer, type Document, isScalar, Lexer, LineCounter, Parser } from 'yaml';
import { MAX_NESTING_DEPTH } from './limits.js';
import { NestingGuard, type NestingViolation } from './nesting.js';
import { DocumentPositions } from './positions.js';
import type { ManifestProblem } from './types.js';

export interface ParsedDocument {
  doc: Document.Parsed;
  positions: DocumentPositions;
}

export interface ParsedFile {
  documents: ParsedDocument[];
  problems: ManifestProblem[];
}

export function parseManifestText(file: string, text: string): ParsedFile {
  const lineCounter = new LineCounter();
  const composer = new Composer({
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
    // Messages without the source excerpt: we print our own `file:line:col`.
    prettyErrors: false,
  });
  const guarded = guardedTokens(text, lineCounter);
  // What yaml's `parseAllDocuments` does, with the nesting guard between its lexer and its parser.
  const docs: Document.Parsed[] = Array.from(composer.compose(guarded.tokens()));
  const tooDeep = guarded.violation();
  if (tooDeep) {
    return {
      documents: [],
      problems: [
        {
          position: { file, ...tooDeep },
          message: `values are nested more than ${MAX_NESTING_DEPTH} levels deep; the file is not read further`,
        },
      ],
    };
  }

  const documents: ParsedDocument[] = [];
  const problems: ManifestProblem[] = [];
  for (const doc of docs) {
    const positions = new DocumentPositions(file, doc, lineCounter);
    // Unresolved tags are warnings to yaml; prepare.ts reports every disallowed tag itself.
    const issues = [
      ...doc.errors,
      ...doc.warnings.filter((warning) => warning.code !== 'TAG_RESOLVE_FAILED'),
    ];
    for (const issue of issues) {
      problems.push({ position: positions.at(issue.pos[0]), message: `YAML: ${describeYamlIssue(issue)}` });
    }
    if (issues.length > 0) continue;
    // Empty documents (`---` followed by nothing, or only comments) are skipped; yaml gives them
    // a null scalar as contents.
    if (doc.contents === null || (isScalar(doc.contents) && doc.contents.value === null)) continue;
    documents.push({ doc, positions });
  }
  return { documents, problems };
}

function describeYamlIssue(issue: { message: string; code: string }): string {
  const message = issue.message.replace(/\s+/g, ' ').trim();
  // yaml's message for its own stack overflow guard is technical; say what it means.
  if (issue.code === 'RESOURCE_EXHAUSTION') return `input is too deeply nested or too large (${message})`;
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
