/**
 * The JSON Schema of one manifest document, built from the kinds: used by ajv to validate and
 * written to `schemas/manifest.schema.json` for editors (`# yaml-language-server: $schema=...`).
 *
 * Shape: a root that checks the envelope and dispatches on `kind` with ajv's `discriminator`
 * keyword, over `oneOf` with one branch per kind (its metadata rules, its `nameSchema`, its
 * `specSchema`). With the discriminator ajv reports only the matching branch's errors and applies
 * its defaults; editors that do not know the keyword still complete kinds from the branches' consts.
 */
import type { TSchema } from '@sinclair/typebox';
import { isNamespaced, namespaceFieldOf } from '../resources/contract.js';
import { BUILTIN_KIND_NAMES, type BuiltinKind, builtinKinds, LOCAL_NAME_SCHEMA } from './builtins.js';
import {
  API_VERSION,
  ENVELOPE_FIELDS,
  type ManifestKind,
  type ManifestService,
  servicesOfKinds,
} from './kinds.js';

export const MANIFEST_SCHEMA_ID = 'urn:converge:schema:manifest:v1';
const DRAFT_07 = 'http://json-schema.org/draft-07/schema#';

type JsonSchema = Record<string, unknown>;

export function buildManifestSchema(
  kinds: readonly ManifestKind[],
  services: readonly ManifestService[] = servicesOfKinds(kinds),
): JsonSchema {
  checkKindNames(kinds);
  return rootSchema([...kinds.map(resourceBranch), ...builtinKinds(services).map(builtinBranch)]);
}

/**
 * The manifest schema cut down to the branch of one `kind` value, for validating a document of
 * that kind: the discriminator checks only the matching branch, so the errors are those of the
 * whole schema while only one kind's schema is compiled. A value that names no kind keeps every
 * built-in branch (and no resource kind's), enough for the discriminator to call it unknown.
 */
export function buildDocumentSchema(
  kinds: readonly ManifestKind[],
  services: readonly ManifestService[],
  kindName: unknown,
): JsonSchema {
  const kind = kinds.find((k) => k.kind === kindName);
  if (kind) return rootSchema([resourceBranch(kind)]);
  const builtins = builtinKinds(services);
  const builtin = builtins.find((b) => b.kind === kindName);
  return rootSchema((builtin ? [builtin] : builtins).map(builtinBranch));
}

function rootSchema(branches: JsonSchema[]): JsonSchema {
  return {
    $schema: DRAFT_07,
    $id: MANIFEST_SCHEMA_ID,
    title: 'Converge manifest document',
    description: `One document of a Converge manifest: apiVersion ${API_VERSION}, a kind, metadata and the kind's spec.`,
    type: 'object',
    // `spec` is required by each kind's branch: a resource declared `ensure: absent` needs none.
    required: ENVELOPE_FIELDS.filter((f) => f !== 'spec'),
    properties: {
      apiVersion: apiVersionSchema(),
      kind: { type: 'string', description: 'What the document describes.' },
      metadata: { type: 'object' },
      spec: { type: 'object' },
    },
    additionalProperties: false,
    discriminator: { propertyName: 'kind' },
    oneOf: branches,
  };
}

/** The schema as checked in: sorted keys, two-space indent, final newline. */
export function renderManifestSchemaJson(
  kinds: readonly ManifestKind[],
  services: readonly ManifestService[] = servicesOfKinds(kinds),
): string {
  return `${JSON.stringify(sortKeys(buildManifestSchema(kinds, services)), null, 2)}\n`;
}

/** Every kind name a manifest may use, sorted: for the "unknown kind" message. */
export function knownKindNames(kinds: readonly ManifestKind[]): string[] {
  return [...kinds.map((kind) => kind.kind), ...BUILTIN_KIND_NAMES].sort();
}

function resourceBranch(kind: ManifestKind): JsonSchema {
  const metadata: JsonSchema = {
    name: kind.nameSchema,
    ...(isNamespaced(kind)
      ? {
          [namespaceFieldOf(kind)]: kind.namespaceSchema ?? {
            type: 'string',
            minLength: 1,
            description: `Where the object lives in its service${kind.namespaceLabel ? ` (its ${kind.namespaceLabel})` : ''}.`,
          },
        }
      : {}),
    // The name of a Connection document for the kind's service; without it the environment's
    // default connection for the service is used. Its description states the naming rule, which
    // error messages repeat.
    connection: LOCAL_NAME_SCHEMA,
    labels: labelsSchema(),
    ensure: {
      type: 'string',
      enum: ['present', 'absent'],
      description:
        'absent: delete the object (explicitly, in the plan like any other change); default present',
    },
  };
  const branch = envelope(kind.kind, kind.description, metadata, kind.specSchema);
  // An object declared absent is only deleted: its spec says nothing, so it may be left out.
  return {
    ...branch,
    required: ENVELOPE_FIELDS.filter((f) => f !== 'spec'),
    if: {
      properties: {
        metadata: { type: 'object', properties: { ensure: { const: 'absent' } }, required: ['ensure'] },
      },
      required: ['metadata'],
    },
    else: { required: ['spec'] },
  };
}

function builtinBranch(kind: BuiltinKind): JsonSchema {
  return envelope(
    kind.kind,
    kind.description,
    { name: kind.nameSchema, labels: labelsSchema() },
    kind.specSchema,
  );
}

function envelope(
  kind: string,
  description: string,
  metadataProperties: JsonSchema,
  spec: TSchema,
): JsonSchema {
  return {
    type: 'object',
    description,
    required: [...ENVELOPE_FIELDS],
    properties: {
      apiVersion: apiVersionSchema(),
      kind: { const: kind },
      metadata: {
        type: 'object',
        required: ['name'],
        properties: metadataProperties,
        additionalProperties: false,
      },
      spec,
    },
    additionalProperties: false,
  };
}

function apiVersionSchema(): JsonSchema {
  return { const: API_VERSION, description: `Always ${API_VERSION}.` };
}

function labelsSchema(): JsonSchema {
  return {
    type: 'object',
    description: 'Free-form labels for people and tools; they never reach a service.',
    additionalProperties: { type: 'string' },
  };
}

/** Two kinds with one name, or one named like a built-in kind, is a programming error. */
export function checkKindNames(kinds: readonly ManifestKind[]): void {
  const seen = new Set<string>();
  for (const { kind } of kinds) {
    if (BUILTIN_KIND_NAMES.includes(kind)) {
      throw new Error(`kind ${kind} is built into the manifest layer and cannot be registered again`);
    }
    if (seen.has(kind)) throw new Error(`kind ${kind} is registered twice`);
    seen.add(kind);
  }
}

/**
 * A copy with object keys in code-unit order at every level, so the generated file does not change
 * when a schema's keys are written in another order. Symbol keys (TypeBox's markers) are dropped.
 */
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const child = (value as Record<string, unknown>)[key];
    if (child !== undefined) sorted[key] = sortKeys(child);
  }
  return sorted;
}
