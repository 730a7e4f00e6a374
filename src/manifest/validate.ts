/**
 * Validates documents against the manifest schema with ajv and turns ajv's errors into problems a
 * person can act on: in words, at the line and column of the offending key or value.
 */
import type { Ajv, ErrorObject, Options, ValidateFunction } from 'ajv';
import { addFormats, newAjv as newAjvWith, precompiledFolder, schemaKey } from '../common/precompiled.js';
import { editDistance } from '../common/edit-distance.js';
import { printable } from '../common/printable.js';
import { API_VERSION, type ManifestKind, type ManifestService, servicesOfKinds } from './kinds.js';
import { joinPointer, pointerToPath, valueAtPointer } from './pointer.js';
import type { DocumentLocator } from './positions.js';
import { builtinKinds } from './builtins.js';
import { buildDocumentSchema, buildManifestSchema, knownKindNames } from './schema.js';
import type { ManifestProblem } from './types.js';

/**
 * How every manifest schema is compiled, here and by the build's standalone code
 * (scripts/build-validators.mjs), so that both report the same errors.
 */
export const MANIFEST_AJV_OPTIONS: Readonly<Options> = {
  allErrors: true,
  strict: true,
  useDefaults: true,
  discriminator: true,
  verbose: true,
};

/** The generated validators of the shipped kinds' documents; read on first use. */
const PRECOMPILED_FOLDER = new URL('./validators/', import.meta.url);
let precompiled: ((key: string) => ValidateFunction | undefined) | undefined;

const compiled = new WeakMap<
  readonly ManifestKind[],
  WeakMap<readonly ManifestService[], ValidateFunction>
>();

export function newManifestAjv(extra: Options = {}): Ajv {
  return newAjvWith({ ...MANIFEST_AJV_OPTIONS, ...extra }, [addFormats]);
}

/**
 * The schema `buildDocumentSchema` gives for one `kind` value, as it is compiled: without the
 * shared $id, which ajv allows only once per instance. Also what the build generates code for.
 */
export function documentSchemaToCompile(
  kinds: readonly ManifestKind[],
  services: readonly ManifestService[],
  kindName: unknown,
): Record<string, unknown> {
  const { $id: _id, ...schema } = buildDocumentSchema(kinds, services, kindName);
  return schema;
}

/**
 * The compiled validator of the whole manifest schema (every kind) for a list of kinds and
 * services; compiled once per pair of lists. Documents are checked with `documentValidator`, which
 * compiles only the kinds a manifest uses; this one proves every kind's schema compiles.
 */
export function manifestValidator(
  kinds: readonly ManifestKind[],
  services: readonly ManifestService[] = servicesOfKinds(kinds),
): ValidateFunction {
  const byServices = compiled.get(kinds) ?? new WeakMap<readonly ManifestService[], ValidateFunction>();
  compiled.set(kinds, byServices);
  let validate = byServices.get(services);
  if (!validate) {
    validate = newManifestAjv().compile(buildManifestSchema(kinds, services));
    byServices.set(services, validate);
  }
  return validate;
}

interface PerKind {
  /** Made when a schema without generated code is first met. */
  ajv?: Ajv;
  byKind: Map<string, ValidateFunction>;
}

const compiledPerKind = new WeakMap<readonly ManifestKind[], WeakMap<readonly ManifestService[], PerKind>>();

/**
 * The validator for documents of one `kind` value: the manifest schema with only that kind's
 * branch (`buildDocumentSchema`), compiled the first time a document of the kind is met.
 * Compiling every kind's schema costs more than the rest of `converge validate` on a small
 * manifest, and the discriminator checks one branch per document anyway.
 */
function documentValidator(
  kinds: readonly ManifestKind[],
  services: readonly ManifestService[],
  kindName: unknown,
): ValidateFunction {
  const byServices = compiledPerKind.get(kinds) ?? new WeakMap<readonly ManifestService[], PerKind>();
  compiledPerKind.set(kinds, byServices);
  let perKind = byServices.get(services);
  if (!perKind) {
    perKind = { byKind: new Map() };
    byServices.set(services, perKind);
  }
  // Every value that names no kind shares one validator (the built-ins'), under a key no kind has.
  const known =
    kinds.some((k) => k.kind === kindName) || builtinKinds(services).some((b) => b.kind === kindName);
  const key = known ? String(kindName) : ' unknown';
  let validate = perKind.byKind.get(key);
  if (!validate) {
    const schema = documentSchemaToCompile(kinds, services, kindName);
    precompiled ??= precompiledFolder(PRECOMPILED_FOLDER);
    // One ajv holds every kind's schema that has no generated code.
    validate = precompiled(schemaKey(schema)) ?? (perKind.ajv ??= newManifestAjv()).compile(schema);
    perKind.byKind.set(key, validate);
  }
  return validate;
}

export interface ValidationContext {
  kinds: readonly ManifestKind[];
  /** The services Connection documents may name; default: those the kinds name. */
  services?: readonly ManifestService[];
  positions: DocumentLocator;
  /** Interpolated values: never echoed in messages, since they may be secrets. */
  sensitivePointers: ReadonlySet<string>;
  /** Values whose interpolation failed (already reported): errors about them would only repeat it. */
  failedPointers: ReadonlySet<string>;
}

/** Validates `value` (defaults are filled in place) and returns its problems, if any. */
export function validateDocument(value: unknown, context: ValidationContext): ManifestProblem[] {
  const document = value as Record<string, unknown>;
  if (!Object.hasOwn(document, 'apiVersion') && !Object.hasOwn(document, 'kind')) {
    // Some other YAML file (CI config, compose file) in the folder: one clear line, not a list of
    // every missing and unknown field.
    return [
      {
        position: context.positions.locate(''),
        message: `not a Converge manifest document: it has neither apiVersion nor kind (expected apiVersion: ${API_VERSION}, kind, metadata, spec)`,
      },
    ];
  }
  const validate = documentValidator(
    context.kinds,
    context.services ?? servicesOfKinds(context.kinds),
    document.kind,
  );
  if (validate(value)) return kindRules(document, context);
  const errors = withoutEnsureEcho(
    relevantErrors(validate.errors ?? []).filter(
      (error) => !isUnderAny(error.instancePath, context.failedPointers),
    ),
  );
  const problems: ManifestProblem[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    const problem = describeError(error, value, context);
    // The root and the kind's branch both check the envelope: keep one copy of each problem.
    const key = `${problem.position.line}:${problem.position.col}:${problem.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    problems.push(problem);
  }
  return [...problems, ...anySpecRules(document, context)];
}

/** A kind's rules that hold whatever the spec's shape (`validateAnySpec`), for a document the schema refused. */
function anySpecRules(document: Record<string, unknown>, context: ValidationContext): ManifestProblem[] {
  const kind = context.kinds.find((k) => k.kind === document.kind);
  if (!kind?.validateAnySpec || document.spec === undefined) return [];
  if ((document.metadata as { ensure?: string } | undefined)?.ensure === 'absent') return [];
  const hide = interpolatedStrings(document, context.sensitivePointers);
  return kind.validateAnySpec(document.spec).map((rule) => ({
    position: context.positions.locate(`/spec${rule.pointer}`),
    message: hide(rule.message),
  }));
}

/**
 * A mistyped `metadata.ensure` (`Absent`) also makes the schema ask for the `spec` an object to
 * delete does without: that second error only follows from the first and points at the wrong fix.
 */
function withoutEnsureEcho(errors: ErrorObject[]): ErrorObject[] {
  if (!errors.some((e) => e.instancePath === '/metadata/ensure')) return errors;
  return errors.filter(
    (e) => !(e.keyword === 'required' && e.instancePath === '' && e.params.missingProperty === 'spec'),
  );
}

/**
 * Drops errors that only restate others: the discriminator's "tag must be string" (the root's
 * `required`/`type` on kind says it better), `if` (its `then` errors follow), and the branches of
 * unions (`anyOf`/`oneOf` inside specs) that clearly were not meant.
 */
function relevantErrors(errors: ErrorObject[]): ErrorObject[] {
  let kept = errors.filter(
    (error) => !(error.keyword === 'discriminator' && error.params.error === 'tag') && error.keyword !== 'if',
  );
  for (const union of kept.filter((error) => error.keyword === 'anyOf' || error.keyword === 'oneOf')) {
    const branches = (union.schema as unknown[]) ?? [];
    // A union inside an array reports once per item, all with the same schemaPath: the errors of
    // this union's branches are those under its schemaPath *and* under its value.
    const inBranch = (error: ErrorObject, branchPath: string) =>
      error.schemaPath.startsWith(branchPath) && isWithin(error.instancePath, union.instancePath);
    // The branch the user most likely meant: among those whose type fits the value, the one with
    // the fewest errors, if only one has that few. Its errors say more than "matches no branch".
    const candidates = branches
      .map((branch, index) => ({ branch, path: `${union.schemaPath}/${index}/` }))
      .filter(({ branch }) => typeFits(branch, union.data))
      .map(({ path }) => ({ path, errors: kept.filter((error) => inBranch(error, path)).length }));
    const fewest = Math.min(...candidates.map((candidate) => candidate.errors));
    const best = candidates.filter((candidate) => candidate.errors === fewest);
    const meant = best.length === 1 ? best[0]!.path : undefined;
    // No form fits better than another, often because a misspelt key ("Nmae") is unknown to every
    // form and so also leaves a required one missing: name the misspelling instead of the union.
    const misspelt =
      meant === undefined
        ? misspeltFields(
            union,
            kept.filter((error) => inBranch(error, `${union.schemaPath}/`)),
          )
        : [];
    kept = kept.flatMap((error) => {
      if (error === union) return meant !== undefined ? [] : misspelt.length > 0 ? misspelt : [error];
      if (!inBranch(error, `${union.schemaPath}/`)) return [error];
      if (meant === undefined || !inBranch(error, meant)) return [];
      // A key no form knows is told with every form's keys, not only the meant one's: `Idd` beside
      // a policy's `Name` is likely its `ID` (which may be given too), not a misspelt `Name`.
      if (error.keyword !== 'additionalProperties' || error.instancePath !== union.instancePath)
        return [error];
      const everyKey = everyFormsKeys(union);
      return Object.hasOwn(everyKey.properties, String(error.params.additionalProperty))
        ? [error]
        : [{ ...error, parentSchema: everyKey }];
    });
  }
  return kept;
}

/** A schema listing the keys any object form of a union allows, in the forms' order. */
function everyFormsKeys(union: ErrorObject): { properties: Record<string, object> } {
  const allowed = new Set<string>();
  for (const branch of (union.schema as unknown[]) ?? []) {
    const properties = (branch as { properties?: unknown } | null)?.properties;
    if (typeof properties === 'object' && properties !== null) {
      for (const name of Object.keys(properties)) allowed.add(name);
    }
  }
  return { properties: Object.fromEntries([...allowed].map((name) => [name, {}])) };
}

/**
 * The keys of a union's value that no form allows but that are close to a key some form does
 * allow, as `additionalProperties` errors whose schema lists every form's keys, so the message
 * suggests the right one whichever form it belongs to.
 */
function misspeltFields(union: ErrorObject, branchErrors: ErrorObject[]): ErrorObject[] {
  const parentSchema = everyFormsKeys(union);
  const allowed = new Set(Object.keys(parentSchema.properties));
  const fields = new Set(
    branchErrors
      .filter(
        (error) => error.keyword === 'additionalProperties' && error.instancePath === union.instancePath,
      )
      .map((error) => String(error.params.additionalProperty))
      .filter((field) => !allowed.has(field) && closestName(field, [...allowed]) !== undefined),
  );
  return [...fields].map((field) => ({
    ...union,
    keyword: 'additionalProperties',
    params: { additionalProperty: field },
    parentSchema,
  }));
}

function typeFits(schema: unknown, data: unknown): boolean {
  if (typeof schema !== 'object' || schema === null) return true;
  const { type, const: constant } = schema as { type?: string | string[]; const?: unknown };
  if (constant !== undefined) return false; // a literal branch: the union message lists them instead
  if (type === undefined) return true;
  const actual = jsonType(data);
  const types = Array.isArray(type) ? type : [type];
  return types.includes(actual) || (actual === 'integer' && types.includes('number'));
}

function describeError(error: ErrorObject, document: unknown, context: ValidationContext): ManifestProblem {
  const { positions } = context;
  const pointer = error.instancePath;
  const path = pointerToPath(pointer);
  const subject = path === '' ? 'the document' : path;
  const kind = kindOf(document);
  const secret = secretPointerTest(context.kinds.find((k) => k.kind === kind));
  const shown = (data: unknown, at = pointer) =>
    secret(at) ? '(sensitive value, not shown)' : showValue(data, at, context.sensitivePointers);
  const described = describeSchema(error.parentSchema);
  // Messages quote keys and values of the document as written: one printable line, whatever they hold.
  const at = (message: string, position = positions.locate(pointer)): ManifestProblem => ({
    position,
    message: printable(message),
  });

  switch (error.keyword) {
    case 'discriminator': {
      const known = knownKindNames(context.kinds);
      const written = error.params.tagValue;
      const meant = typeof written === 'string' ? closestName(written, known) : undefined;
      return at(
        `unknown kind ${shown(written, '/kind')}; ${meant ? `did you mean "${meant}"? ` : ''}known kinds: ${known.join(', ')}`,
        positions.locate('/kind'),
      );
    }
    case 'required': {
      const field = String(error.params.missingProperty);
      const where = path === '' ? '' : ` in ${path}`;
      const hint =
        pointer === '' && field === 'apiVersion'
          ? ` (every document starts with apiVersion: ${API_VERSION})`
          : '';
      return at(`missing required field "${field}"${where}${hint}`, positions.locateKey(pointer));
    }
    case 'additionalProperties': {
      const field = String(error.params.additionalProperty);
      const fieldPointer = joinPointer(pointer, field);
      const namespaceField = context.kinds.find((k) => k.kind === kind)?.namespaceField;
      if (pointer === '/metadata' && field === 'namespace' && namespaceField) {
        return at(
          `"namespace" is not allowed: ${kind} objects name it "${namespaceField}" (metadata.${namespaceField})`,
          positions.locateKey(fieldPointer),
        );
      }
      if (pointer === '/metadata' && field === 'namespace' && kind) {
        return at(
          `"namespace" is not allowed: ${kind} objects have no namespace`,
          positions.locateKey(fieldPointer),
        );
      }
      const allowed = Object.keys((error.parentSchema?.properties as object | undefined) ?? {});
      const suggestion = closestName(field, allowed);
      const where = path === '' ? '' : ` in ${path}`;
      const hint = suggestion
        ? `; did you mean "${suggestion}"?`
        : allowed.length > 0
          ? ` (allowed: ${allowed.join(', ')})`
          : '';
      return at(`unknown field "${field}"${where}${hint}`, positions.locateKey(fieldPointer));
    }
    case 'type':
      return at(
        `${subject} must be ${typeList(error.params.type)}, got ${jsonTypeAndValue(error.data, shown)}`,
      );
    case 'const':
      if (
        pointer === '/apiVersion' &&
        typeof error.data === 'string' &&
        !isUnderAny(pointer, context.sensitivePointers)
      ) {
        return at(`unknown apiVersion ${shown(error.data)}: it must be ${API_VERSION}`);
      }
      return at(`${subject} must be ${JSON.stringify(error.params.allowedValue)}, got ${shown(error.data)}`);
    case 'enum':
      return at(
        `${subject} must be one of ${listValues(error.params.allowedValues)}, got ${shown(error.data)}`,
      );
    case 'anyOf':
    case 'oneOf': {
      const literals = ((error.schema as unknown[]) ?? []).map(
        (branch) => (branch as { const?: unknown })?.const,
      );
      if (literals.length > 0 && literals.every((literal) => literal !== undefined)) {
        return at(`${subject} must be one of ${listValues(literals)}, got ${shown(error.data)}`);
      }
      return at(`${subject} does not match any of the allowed forms${described}`);
    }
  }

  const rule = ruleInWords(error);
  if (pointer === '/metadata/name' && kind) {
    return at(`invalid ${kind} name ${shown(error.data)}: ${rule}${described}`);
  }
  if (
    ['pattern', 'format', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'].includes(
      error.keyword,
    )
  ) {
    return at(`${subject} ${rule}${described}, got ${shown(error.data)}`);
  }
  return at(`${subject} ${rule}${described}`);
}

function ruleInWords(error: ErrorObject): string {
  const { params } = error;
  switch (error.keyword) {
    case 'pattern':
      return `must match the pattern ${params.pattern}`;
    case 'format':
      return `must be a valid ${params.format === 'uri' ? 'URI' : params.format}`;
    case 'minLength':
      return params.limit === 1 ? 'must not be empty' : `must be at least ${params.limit} characters long`;
    case 'maxLength':
      return `must be at most ${params.limit} characters long`;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `must be ${params.comparison} ${params.limit}`;
    case 'minItems':
      return `must have at least ${params.limit} item${params.limit === 1 ? '' : 's'}`;
    case 'maxItems':
      return `must have at most ${params.limit} item${params.limit === 1 ? '' : 's'}`;
    case 'uniqueItems':
      return `must not repeat items (items ${params.j} and ${params.i} are equal)`;
    case 'minProperties':
      return `must have at least ${params.limit} field${params.limit === 1 ? '' : 's'}`;
    case 'maxProperties':
      return `must have at most ${params.limit} field${params.limit === 1 ? '' : 's'}`;
    case 'multipleOf':
      return `must be a multiple of ${params.multipleOf}`;
    default:
      return error.message ?? `fails the "${error.keyword}" rule`;
  }
}

/** A schema's own description of its rule ("lowercase letters and dashes"), as a suffix. */
function describeSchema(schema: unknown): string {
  const description = (schema as { description?: unknown } | undefined)?.description;
  if (typeof description !== 'string') return '';
  const text = description.trim().replace(/\.$/, '');
  return text === '' ? '' : ` (${text})`;
}

/**
 * Whether a pointer is at or inside one of the kind's secret attributes (`sensitive`, `writeOnly`),
 * so a value written literally there (`bindpass: 123456`) is never quoted either. Paths are dotted,
 * list indexes are passed through and `*` is any key, as the kinds write them.
 */
function secretPointerTest(kind: ManifestKind | undefined): (pointer: string) => boolean {
  const paths = [...(kind?.sensitive ?? []), ...(kind?.writeOnly ?? [])].map((p) => p.split('.'));
  if (paths.length === 0) return () => false;
  return (pointer) => {
    if (!pointer.startsWith('/spec/')) return false;
    const segments = pointer
      .slice('/spec/'.length)
      .split('/')
      .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
      .filter((s) => !/^\d+$/.test(s));
    return paths.some(
      (path) => segments.length >= path.length && path.every((p, i) => p === '*' || p === segments[i]),
    );
  };
}

function showValue(data: unknown, pointer: string, sensitive: ReadonlySet<string>): string {
  if (isUnderAny(pointer, sensitive)) return '(an interpolated value, not shown)';
  const json = JSON.stringify(data) ?? String(data);
  return json.length > 60 ? `${json.slice(0, 57)}...` : json;
}

function jsonTypeAndValue(data: unknown, shown: (data: unknown) => string): string {
  const type = jsonType(data);
  if (type === 'object' || type === 'array' || type === 'null') return type;
  const value = shown(data);
  // A hidden value already reads "(… not shown)": no second pair of parentheses.
  return `${type === 'integer' ? 'number' : type} ${value.startsWith('(') ? value : `(${value})`}`;
}

function jsonType(data: unknown): string {
  if (data === null) return 'null';
  if (Array.isArray(data)) return 'array';
  if (typeof data === 'number') return Number.isInteger(data) ? 'integer' : 'number';
  return typeof data;
}

function typeList(type: unknown): string {
  const types = Array.isArray(type) ? type : String(type).split(',');
  return types.join(' or ');
}

function listValues(values: unknown): string {
  return (Array.isArray(values) ? values : [values]).map((value) => JSON.stringify(value)).join(', ');
}

function kindOf(document: unknown): string | undefined {
  const kind = (document as { kind?: unknown } | null)?.kind;
  return typeof kind === 'string' ? kind : undefined;
}

function isWithin(pointer: string, parent: string): boolean {
  return pointer === parent || pointer.startsWith(`${parent}/`);
}

/** Whether `pointer`, or a value holding it, is one of `pointers`. */
export function isUnderAny(pointer: string, pointers: ReadonlySet<string>): boolean {
  if (pointers.size === 0) return false;
  for (let at = pointer; ; at = at.slice(0, at.lastIndexOf('/'))) {
    if (pointers.has(at)) return true;
    if (at === '') return false;
  }
}

/** The allowed name the user probably meant: same letters in another case, or one or two typos. */
function closestName(field: string, allowed: readonly string[]): string | undefined {
  const lower = field.toLowerCase();
  const sameCase = allowed.find((name) => name.toLowerCase() === lower);
  if (sameCase) return sameCase;
  let best: string | undefined;
  let bestDistance = field.length <= 4 ? 1 : 2;
  for (const name of allowed) {
    // More than two edits apart is never a suggestion: such names are not even compared.
    const distance = editDistance(lower, name.toLowerCase(), 2);
    if (distance <= bestDistance && (best === undefined || distance < bestDistance)) {
      best = name;
      bestDistance = distance;
    }
  }
  return best;
}

/** Rules a kind states in code because JSON Schema says them poorly (fields that exclude each other). */
function kindRules(document: Record<string, unknown>, context: ValidationContext): ManifestProblem[] {
  const kind = context.kinds.find((k) => k.kind === document.kind);
  if (!kind?.validateSpec) return [];
  // An object declared absent is only deleted: rules about what it would hold do not apply.
  if ((document.metadata as { ensure?: string } | undefined)?.ensure === 'absent') return [];
  const rules = [
    ...kind.validateSpec(document.spec as Record<string, unknown>),
    ...(kind.validateAnySpec?.(document.spec) ?? []),
  ];
  if (rules.length === 0) return [];
  const hide = interpolatedStrings(document, context.sensitivePointers);
  return rules.map((rule) => ({
    position: context.positions.locate(`/spec${rule.pointer}`),
    message: hide(rule.message),
  }));
}

/** Shorter interpolated strings are left in messages: hiding them would mangle every other word. */
const HIDDEN_MIN_LENGTH = 3;

/**
 * A kind's rule may quote a value it compares (a userfilter must contain the userattr value); the kind
 * cannot know that value came from `${env:…}`. So every interpolated string of the document is taken
 * out of its messages, in any letter case (a rule may quote it lower-cased).
 */
function interpolatedStrings(
  document: Record<string, unknown>,
  sensitive: ReadonlySet<string>,
): (message: string) => string {
  const values: string[] = [];
  const collect = (value: unknown) => {
    if (typeof value === 'string') {
      if (value.length >= HIDDEN_MIN_LENGTH) values.push(value);
    } else if (value !== null && typeof value === 'object') {
      for (const inner of Object.values(value)) collect(inner);
    }
  };
  for (const pointer of sensitive) collect(valueAtPointer(document, pointer));
  if (values.length === 0) return (message) => message;
  // Longest first, so a value containing another is hidden whole.
  const pattern = new RegExp(
    values
      .sort((a, b) => b.length - a.length)
      .map((v) => v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('|'),
    'gi',
  );
  return (message) => message.replace(pattern, '(an interpolated value, not shown)');
}
