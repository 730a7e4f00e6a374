/**
 * Checks that a decoded response body has the shape its client reads, before any kind touches it.
 * A broken or hostile service answering `"Policies": "x"` must fail the command with a message that
 * names the service, the request and what is wrong, not with `policies.map is not a function` from
 * deep inside a kind.
 *
 * The schemas (TypeBox, beside each service's types) are lenient on purpose: they require only what
 * the client and the kinds read, with the types they assume, and allow every other property, so a
 * service that adds fields keeps working. The build generates each one's validator ahead (ajv's
 * standalone code, see ../../common/precompiled.ts); a schema without one is compiled once with
 * ajv, the stack the manifest uses. Either is cached per schema object, so a 10,000-role list costs
 * one pass. Response schemas are built on first use (`lazySchema`): a command that reads no answer
 * (`validate`) builds none.
 *
 * The problem text names JSON pointers and expected types only, at most `MAX_PROBLEMS` of them, and
 * never a value: a value may be a secret the service echoes (a token, a bind password).
 */
import type { Secrets } from '../../common/scrub.js';
import type { TSchema } from '@sinclair/typebox';
import type { Ajv, ErrorObject, Options, ValidateFunction } from 'ajv';
import { loadPrecompiled, newAjv, schemaKey } from '../../common/precompiled.js';
import { printable } from '../../common/printable.js';
import { UnexpectedResponseError } from './errors.js';

/** Enough to see the pattern of a mismatch; a list of 10,000 wrong items should not print 10,000 lines. */
const MAX_PROBLEMS = 3;
/** A pointer built from a hostile service's map keys could be any length: shown up to this many characters. */
const MAX_POINTER_CHARS = 120;

/**
 * How every response schema is compiled, here and by the build's standalone code. allErrors so a
 * few problems can be listed; no coercion, no defaults: the body is only read. allowUnionTypes: a
 * few fields are `["array", "string"]` (a list the service may show as text).
 */
export const RESPONSE_AJV_OPTIONS: Readonly<Options> = {
  allErrors: true,
  strict: true,
  allowUnionTypes: true,
};

const PRECOMPILED_FILE = new URL('./validators.generated.cjs', import.meta.url);
let precompiled: ReadonlyMap<string, ValidateFunction> | undefined;
// One ajv for every schema without generated code, made when the first one is met.
let ajv: Ajv | undefined;
const compiled = new WeakMap<TSchema, ValidateFunction>();

function validatorFor(schema: TSchema): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    precompiled ??= loadPrecompiled(PRECOMPILED_FILE);
    validate = precompiled.get(schemaKey(schema)) ?? (ajv ??= newAjv(RESPONSE_AJV_OPTIONS)).compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}

/** A schema given as its builder, so that it is built on first use: see `lazySchema`. */
export type SchemaSource = TSchema | (() => TSchema);

/**
 * `build`, run once on first call: response schemas are wrapped in it so that importing a client
 * (which every kind does) builds none of them.
 */
export function lazySchema<T extends TSchema>(build: () => T): () => T {
  let schema: T | undefined;
  return () => (schema ??= build());
}

/** The schema of `source`, built now if it is a builder. */
export function schemaOf(source: SchemaSource): TSchema {
  return typeof source === 'function' ? source() : source;
}

/**
 * `schema` that also accepts `null`, where the spec or the real service sends null for an empty list
 * or an absent object (ajv's `nullable` keyword: one type check, no `anyOf` noise in the errors).
 */
export function nullable<T extends TSchema>(schema: T): T {
  return { ...schema, nullable: true };
}

/** Which answer was checked, for the error. */
export interface ShapeContext {
  service: string;
  method: string;
  /** Path with query, as the request sent it; secret query parameters are redacted by the error. */
  path: string;
  status: number;
  /** Strings to scrub from the error text (the connection's token), as every service error does. */
  secrets?: Secrets;
}

/**
 * Returns `body` typed as `T` when it matches `schema`; otherwise throws an `UnexpectedResponseError`
 * (`registry: GET /v1/acl/roles → 200 unexpected response: /0/Policies must be array`).
 */
export function checkShape<T>(schema: SchemaSource, body: unknown, context: ShapeContext): T {
  const validate = validatorFor(schemaOf(schema));
  let problem: string;
  try {
    if (validate(body)) return body as T;
    problem = describeProblems(validate.errors ?? []);
  } catch (error) {
    // A recursive schema (a job diff) walks the body as deep as it goes: a hostile nesting of
    // thousands of levels overflows the stack, which is a wrong shape too, not a crash. Answers are
    // refused over MAX_RESPONSE_NESTING before they are parsed (body.ts); this is for any other.
    if (!(error instanceof RangeError)) throw error;
    problem = 'the body is nested too deeply';
  }
  throw new UnexpectedResponseError({
    service: context.service,
    method: context.method.toUpperCase(),
    path: context.path,
    status: context.status,
    ...(context.secrets ? { secrets: context.secrets } : {}),
    problem: `unexpected response: ${problem}`,
  });
}

/**
 * `/0/Policies must be array; /1 must have required property 'ID' (and 9998 more)`. ajv's messages
 * name the expected type or the missing property, never the value found.
 */
export function describeProblems(errors: readonly ErrorObject[]): string {
  // An if/then or anyOf error only says "the branch failed"; the branch's own errors say why.
  const specific = errors.filter((e) => e.keyword !== 'if' && e.keyword !== 'anyOf');
  const lines = [...new Set((specific.length > 0 ? specific : errors).map(describeProblem))];
  if (lines.length === 0) return 'the body does not have the expected shape';
  const shown = lines.slice(0, MAX_PROBLEMS).join('; ');
  return lines.length > MAX_PROBLEMS ? `${shown} (and ${lines.length - MAX_PROBLEMS} more)` : shown;
}

function describeProblem(error: ErrorObject): string {
  const where = error.instancePath === '' ? 'the body' : boundedPointer(error.instancePath);
  return `${where} ${error.message ?? `fails ${error.keyword}`}`;
}

/** Control characters of a hostile key would garble the terminal; a long one would flood it. */
function boundedPointer(pointer: string): string {
  // The shared escaping also covers bidi overrides and zero-width characters a key could hold.
  const shown = printable(pointer);
  return shown.length > MAX_POINTER_CHARS ? `${shown.slice(0, MAX_POINTER_CHARS)}…` : shown;
}
