/**
 * Loads the source of a generated validators module (ajv's standalone CommonJS code) without
 * writing it anywhere: its `require`s of ajv's runtime resolve from this project, as the built file's do.
 */
import { createRequire } from 'node:module';
import type { ValidateFunction } from 'ajv';

const projectRequire = createRequire(import.meta.url);

export function evaluateStandalone(source: string): Map<string, ValidateFunction> {
  const module = { exports: {} as Record<string, ValidateFunction> };
  // The generated code is CommonJS: a function of require, module and exports.
  new Function('require', 'module', 'exports', source)(projectRequire, module, module.exports);
  return new Map(Object.entries(module.exports));
}

/**
 * What a validator said of `value`: its verdict, its errors, and the value after defaults were
 * filled, as JSON: the compiled validator's errors point into the TypeBox schema, whose symbol keys
 * (TypeBox's own markers, read by no message) the generated code's copy does not have.
 */
export function outcome(validate: ValidateFunction, value: unknown) {
  const data = structuredClone(value);
  let ok: boolean | string;
  try {
    ok = validate(data);
  } catch (error) {
    ok = `threw ${(error as Error).name}`;
  }
  return JSON.parse(JSON.stringify({ ok, errors: validate.errors ?? null, data })) as unknown;
}
