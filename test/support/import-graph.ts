/**
 * The import graph of src/ and the rules the architecture test holds it to (ARCHITECTURE.md). The
 * rules are plain functions over a list of imports, so a unit test can show each one failing on a
 * small synthetic graph without a broken source tree.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * `type`: `import type`/`export type`, erased at build. `static`: loads the module when the importer
 * loads (with `verbatimModuleSyntax`, `import { type A }` is one too: it leaves `import {}` behind).
 * `dynamic`: `import()`, loaded only when that code runs.
 */
export type ImportKind = 'static' | 'type' | 'dynamic';

export interface Import {
  /** Importing file, relative to src/ with `/` separators (`engine/workflow.ts`). */
  from: string;
  /** Imported file, relative to src/, as a `.ts` path. */
  to: string;
  /** The specifier as written, for messages. */
  specifier: string;
  kind: ImportKind;
}

export interface SourceFile {
  /** Relative to src/, `/` separators. */
  path: string;
  text: string;
}

/** Every `.ts` file under `root`, as paths relative to it. */
export function readSources(root: string): SourceFile[] {
  const files: SourceFile[] = [];
  const walk = (folder: string): void => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const full = path.join(folder, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.ts')) {
        files.push({
          path: path.relative(root, full).split(path.sep).join('/'),
          text: readFileSync(full, 'utf8'),
        });
      }
    }
  };
  walk(root);
  return files;
}

/** The relative imports of each file (packages are not part of the graph). */
export function importsOf(files: readonly SourceFile[]): Import[] {
  const imports: Import[] = [];
  for (const file of files) {
    const kinds = importKinds(file);
    for (const reference of ts.preProcessFile(file.text, true, true).importedFiles) {
      if (!reference.fileName.startsWith('.')) continue;
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(file.path), reference.fileName));
      imports.push({
        from: file.path,
        to: target.replace(/\.js$/, '.ts'),
        specifier: reference.fileName,
        // preProcessFile finds the specifier (quote included) where the syntax tree has its literal.
        kind: kinds.get(reference.pos) ?? 'static',
      });
    }
  }
  return imports;
}

/** preProcessFile does not tell `import type` or `import()` apart: the syntax tree does, by position. */
function importKinds(file: SourceFile): Map<number, ImportKind> {
  const source = ts.createSourceFile(file.path, file.text, ts.ScriptTarget.Latest, true);
  const kinds = new Map<number, ImportKind>();
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      kinds.set(node.moduleSpecifier.getStart(source), node.importClause?.isTypeOnly ? 'type' : 'static');
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier) {
      kinds.set(node.moduleSpecifier.getStart(source), node.isTypeOnly ? 'type' : 'static');
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [specifier] = node.arguments;
      if (specifier) kinds.set(specifier.getStart(source), 'dynamic');
    } else if (ts.isImportTypeNode(node)) {
      // `typeof import('./x.js')` in a type position: erased like `import type`.
      kinds.set(node.argument.getStart(source), 'type');
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return kinds;
}

/** The top folder of src/ a file belongs to; `.` for the files at the top (the package's entries). */
export function folderOf(file: string): string {
  const slash = file.indexOf('/');
  return slash === -1 ? '.' : file.slice(0, slash);
}

export interface Layering {
  /** Highest first; the folders of one entry are one layer (they may import each other, without cycles). */
  layers: readonly (readonly string[])[];
  /** Beside the layers: who may import it (dynamically or for types) and what it may import. */
  beside: { folder: string; importedBy: readonly string[]; imports: readonly string[] };
}

export const LAYERING: Layering = {
  layers: [
    ['.'],
    ['cli'],
    ['reconcile'],
    ['engine'],
    ['manifest', 'planner', 'applier'],
    ['resources'],
    ['clients'],
    ['common'],
  ],
  beside: { folder: 'sandbox', importedBy: ['.', 'cli'], imports: ['clients', 'common'] },
};

const describe = (i: Import): string => `${i.from} imports '${i.specifier}'`;

/** (a) Imports that go up a layer, or into or out of the folder beside the layers other than allowed. */
export function layerViolations(imports: readonly Import[], layering: Layering = LAYERING): string[] {
  const rank = new Map<string, number>();
  layering.layers.forEach((folders, index) => folders.forEach((folder) => rank.set(folder, index)));
  const { beside } = layering;
  const problems: string[] = [];
  for (const i of imports) {
    const from = folderOf(i.from);
    const to = folderOf(i.to);
    if (from === to) continue;
    if (from === beside.folder) {
      if (!beside.imports.includes(to)) {
        problems.push(`${describe(i)}: ${beside.folder}/ may import only ${beside.imports.join(', ')}`);
      }
      continue;
    }
    if (to === beside.folder) {
      if (!beside.importedBy.includes(from)) {
        problems.push(`${describe(i)}: only ${beside.importedBy.join(', ')} may import ${beside.folder}/`);
      }
      continue;
    }
    const fromRank = rank.get(from);
    const toRank = rank.get(to);
    if (fromRank === undefined || toRank === undefined) {
      problems.push(
        `${describe(i)}: ${fromRank === undefined ? from : to}/ has no layer (add it to LAYERING)`,
      );
    } else if (toRank < fromRank) {
      problems.push(`${describe(i)}: ${from}/ is below ${to}/, so the import goes up a layer`);
    }
  }
  return problems;
}

/**
 * (b) Cycles between folders, each with one import per arrow: between the top folders of src/ (its
 * top files counting as `.`), and between sibling folders at any depth (`sandbox/core` and
 * `sandbox/config`). A folder and its own subfolders are one unit to the rest, so the files of a
 * folder may import its subfolders and back (`planner/` and `planner/render/`).
 */
export function folderCycles(imports: readonly Import[]): string[] {
  const arrows = new Map<string, Map<string, Import>>();
  for (const i of imports) {
    const units = unitsOf(i.from, i.to);
    if (!units) continue;
    const [from, to] = units;
    const out = arrows.get(from) ?? new Map<string, Import>();
    if (!out.has(to)) out.set(to, i);
    arrows.set(from, out);
  }
  return stronglyConnected(arrows).map((members) => {
    const inside = new Set(members);
    const lines = members.flatMap((from) =>
      [...(arrows.get(from) ?? [])]
        .filter(([to]) => inside.has(to))
        .map(([to, i]) => `${from} → ${to} (${describe(i)})`),
    );
    return `cycle between ${members.join(', ')}: ${lines.join('; ')}`;
  });
}

/**
 * The two folders an import connects: the children of the deepest folder both files are in, or
 * nothing when they are in the same folder or one file lies directly in that common folder.
 */
function unitsOf(from: string, to: string): [string, string] | undefined {
  const a = from.split('/');
  const b = to.split('/');
  let common = 0;
  while (common < a.length - 1 && common < b.length - 1 && a[common] === b[common]) common++;
  if (common === 0) {
    const units: [string, string] = [folderOf(from), folderOf(to)];
    return units[0] === units[1] ? undefined : units;
  }
  if (common >= a.length - 1 || common >= b.length - 1) return undefined;
  return [a.slice(0, common + 1).join('/'), b.slice(0, common + 1).join('/')];
}

/** Tarjan's algorithm: the groups of folders that reach each other (only groups of two or more). */
function stronglyConnected(arrows: Map<string, Map<string, unknown>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of arrows.get(node)?.keys() ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const group: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        group.push(member);
      } while (member !== node);
      if (group.length > 1) groups.push(group.sort());
    }
  };
  for (const node of arrows.keys()) if (!index.has(node)) visit(node);
  return groups;
}

/** (c) Imports that load the sandbox with the importer: it must load only when a sandbox runs. */
export function staticSandboxImports(imports: readonly Import[], sandbox = 'sandbox'): string[] {
  return imports
    .filter((i) => i.kind === 'static' && folderOf(i.from) !== sandbox && folderOf(i.to) === sandbox)
    .map((i) => `${describe(i)} statically: load it with import()`);
}

/**
 * (d) Whether loading `entry` loads a file of `folder` (through static imports, transitively): the
 * library must not load the CLI. Names the chain of imports that does. `folder` may also be one file
 * (`clients/http/client.ts`): validate must not load the HTTP client.
 */
export function staticallyLoaded(imports: readonly Import[], entry: string, folder: string): string[] {
  const byImporter = new Map<string, Import[]>();
  for (const i of imports)
    if (i.kind === 'static') byImporter.set(i.from, [...(byImporter.get(i.from) ?? []), i]);
  const via = new Map<string, Import | undefined>([[entry, undefined]]);
  const queue = [entry];
  const problems: string[] = [];
  while (queue.length > 0) {
    const file = queue.shift()!;
    for (const i of byImporter.get(file) ?? []) {
      if (via.has(i.to)) continue;
      via.set(i.to, i);
      if (folderOf(i.to) === folder || i.to === folder) {
        const chain: string[] = [];
        for (let step: Import | undefined = i; step; step = via.get(step.from)) chain.unshift(describe(step));
        problems.push(
          `${entry} loads ${i.to === folder ? folder : `${folder}/`} statically: ${chain.join(', which ')}`,
        );
      } else queue.push(i.to);
    }
  }
  return problems;
}

/**
 * (e) Words of `names` in code (identifiers, strings, templates), comments left out: the sandbox's
 * core, index, config and command must stay service-blind. Case-insensitive, inside longer words too
 * (`registryConfig`), with the line of each.
 */
export function namesInCode(file: SourceFile, names: readonly string[]): string[] {
  const pattern = new RegExp(names.join('|'), 'i');
  const source = ts.createSourceFile(file.path, file.text, ts.ScriptTarget.Latest, true);
  const problems: string[] = [];
  // Every token the parser read (comments are trivia, not tokens), except doc comments, which the
  // parser keeps as nodes.
  const visit = (node: ts.Node): void => {
    if (node.kind >= ts.SyntaxKind.FirstJSDocNode && node.kind <= ts.SyntaxKind.LastJSDocNode) return;
    if (node.getChildCount(source) === 0) {
      const text = node.getText(source);
      const match = pattern.exec(text);
      if (match) {
        const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
        problems.push(`${file.path}:${line + 1} names '${match[0]}' in ${JSON.stringify(text.slice(0, 80))}`);
      }
      return;
    }
    for (const child of node.getChildren(source)) visit(child);
  };
  visit(source);
  return problems;
}
