/**
 * Writes exported objects as manifest files: one file per kind (`AclRole.yaml`, `Job.yaml`), each a
 * stream of documents in address order, as a person would lay out a manifest. A document with
 * placeholders says above itself which variable fills each and that `--allow-env` must expose it.
 * Files are created, never overwritten: an export into a manifest folder must not replace its files.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { stringify } from 'yaml';
import { API_VERSION } from '../manifest/kinds.js';
import type { ExportedObject } from './export.js';
import { EngineError } from './errors.js';

/** One manifest document, with its placeholder notes as comments. */
export function exportedDocument(object: ExportedObject): string {
  const { key } = object;
  const metadata: Record<string, string> = { name: key.name };
  if (key.namespace !== undefined) metadata[object.namespaceField] = key.namespace;
  if (key.connection !== undefined) metadata.connection = key.connection;
  const notes = object.placeholders.map(
    (p) =>
      `# ${p.path} is secret and not exported: set ${p.variable} and allow it with --allow-env ${p.variable} (or CONVERGE_ALLOW_ENV)`,
  );
  const body = stringify(
    { apiVersion: API_VERSION, kind: key.kind, metadata, spec: object.spec },
    { lineWidth: 0, aliasDuplicateObjects: false },
  );
  return [...notes, body].join('\n');
}

/** Writes the files; returns their paths. Refuses a file that already exists. */
export async function writeExportFiles(dir: string, objects: readonly ExportedObject[]): Promise<string[]> {
  const byKind = new Map<string, ExportedObject[]>();
  for (const o of objects) byKind.set(o.key.kind, [...(byKind.get(o.key.kind) ?? []), o]);
  await mkdir(dir, { recursive: true });
  const written: string[] = [];
  for (const [kind, list] of byKind) {
    const file = path.join(dir, `${kind}.yaml`);
    const text = `${list.map(exportedDocument).join('---\n')}`;
    try {
      await writeFile(file, text, { flag: 'wx', mode: 0o644 });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new EngineError(
        code === 'EEXIST'
          ? `${file} already exists: export writes new files only; remove it or choose another folder with -o`
          : `cannot write ${file}: ${code ?? String(error)}`,
      );
    }
    written.push(file);
  }
  return written;
}
