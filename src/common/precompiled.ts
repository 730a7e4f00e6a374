/**
 * Validators compiled at build time (ajv's standalone code, written by scripts/build-validators.mjs
 * beside the module that uses them) and ajv itself for every schema that was not.
 *
 * Compiling a JSON schema with ajv costs more than the rest of a small `converge validate`, and
 * loading ajv's compiler is dozens of modules; the generated code needs neither. A generated
 * validator is found by a hash of its schema's JSON, so a schema that changed since the build, or
 * one the build never saw (a library user's own kind), misses and is compiled with ajv as before:
 * both are ajv's code from the same schema and options, so they report the same errors.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { Ajv, Options, ValidateFunction } from 'ajv';
import { hash160 } from './schema-hash.js';

const require = createRequire(import.meta.url);

/** The key of a schema in a generated module: a hash of its JSON (TypeBox's symbol keys do not count). */
export function schemaKey(schema: object): string {
  return `v${hash160(JSON.stringify(schema))}`;
}

/**
 * The validators of a generated module, by `schemaKey`; empty when there is none (running from the
 * sources, where nothing is built). Read synchronously because validation is synchronous.
 */
export function loadPrecompiled(file: URL): ReadonlyMap<string, ValidateFunction> {
  const path = fileURLToPath(file);
  let exported: Record<string, unknown>;
  try {
    exported = require(path) as Record<string, unknown>;
  } catch (error) {
    // Absent is expected (sources, or a build without the step); a module it needs being absent, or
    // anything else, is a broken build and says so.
    const { code, message } = error as NodeJS.ErrnoException;
    if (code === 'MODULE_NOT_FOUND' && message.includes(path)) return new Map();
    throw error;
  }
  return new Map(
    Object.entries(exported).filter(
      (entry): entry is [string, ValidateFunction] => typeof entry[1] === 'function',
    ),
  );
}

/**
 * Validators generated one module per schema in `folder` (`<schemaKey>.cjs`), each read when first
 * asked for: a run pays for the kinds its manifest uses, not for all of them (issue 20). Undefined
 * when there is none for the key (running from the sources, or a schema the build never saw).
 */
export function precompiledFolder(folder: URL): (key: string) => ValidateFunction | undefined {
  const loaded = new Map<string, ValidateFunction | undefined>();
  return (key) => {
    // Keys are `v` and hex digits (`schemaKey`), never a path of their own.
    if (!/^v[0-9a-f]{40}$/.test(key)) return undefined;
    if (!loaded.has(key)) loaded.set(key, loadPrecompiled(new URL(`${key}.cjs`, folder)).get(key));
    return loaded.get(key);
  };
}

/**
 * A new ajv with `options`, loading ajv only now: a command whose schemas were all generated never
 * loads the compiler. `plugins` run on it (ajv-formats).
 */
export function newAjv(options: Options, plugins: readonly ((ajv: Ajv) => void)[] = []): Ajv {
  const { Ajv: AjvClass } = require('ajv') as typeof import('ajv');
  const ajv = new AjvClass(options);
  for (const plugin of plugins) plugin(ajv);
  return ajv;
}

/** ajv-formats' plugin, loaded only when an ajv is made. */
export function addFormats(ajv: Ajv): void {
  // ajv-formats is CommonJS: its callable is the module's `default`.
  const plugin = (require('ajv-formats') as { default: (ajv: Ajv) => void }).default;
  plugin(ajv);
}
