/**
 * Reads a sandbox config file (YAML) and validates it, naming `file:line:col` for every problem:
 * YAML syntax errors, duplicate keys, unknown keys, wrong types and bad seed objects alike.
 */
import { readFileSync } from 'node:fs';
import { isMap, isScalar, isSeq, LineCounter, type Node, parseDocument } from 'yaml';
import type { AnyServiceDefinition } from '../core/service.js';
import type { SandboxConfig } from './types.js';
import {
  type ConfigLocator,
  type ConfigPath,
  SandboxConfigError,
  validateSandboxConfig,
} from './validate.js';

export function loadConfigFile(path: string, services: readonly AnyServiceDefinition[]): SandboxConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const reason =
      code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a folder' : (err as Error).message;
    throw new SandboxConfigError([{ path: [], message: `cannot read the sandbox config: ${reason}` }], path);
  }

  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: false });
  if (doc.errors.length > 0) {
    throw new SandboxConfigError(
      doc.errors.map((err) => {
        const pos = lineCounter.linePos(err.pos[0]);
        return { where: `${path}:${pos.line}:${pos.col}`, path: [], message: err.message };
      }),
      path,
    );
  }

  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    throw new SandboxConfigError([{ path: [], message: (err as Error).message }], path);
  }
  return validateSandboxConfig(value, {
    services,
    source: path,
    locate: locatorFor(doc.contents, lineCounter),
  });
}

function isEmptyScalar(node: unknown): boolean {
  if (node === null || node === undefined) return true;
  return isScalar(node) && node.value === null && (!node.range || node.range[0] === node.range[1]);
}

/** Walks the YAML tree along a config path; falls back to the deepest node that exists. */
function locatorFor(root: Node | null, lines: LineCounter): ConfigLocator {
  return (path: ConfigPath, atKey: boolean) => {
    let node: unknown = root;
    let found: unknown = root;
    for (let i = 0; i < path.length; i++) {
      const seg = path[i]!;
      const last = i === path.length - 1;
      if (isMap(node)) {
        const pair = node.items.find((p) => String(isScalar(p.key) ? p.key.value : p.key) === String(seg));
        if (!pair) break;
        node = last && atKey ? pair.key : pair.value;
        // An empty value (`faults:`) has no text of its own: point at its key.
        if (isEmptyScalar(node)) node = pair.key;
      } else if (isSeq(node) && typeof seg === 'number') {
        node = node.items[seg];
      } else {
        break;
      }
      if (!node) break;
      found = node;
    }
    const range = (found as { range?: [number, number, number] } | null)?.range;
    return range ? lines.linePos(range[0]) : undefined;
  };
}
