/**
 * What Converge reads of the workspace service's JSON:API documents, as one schema checked before
 * the document is flattened (see `../http/shape.ts`). `data` may be one resource, a list or null:
 * which of them a call expects is checked by `json-api.ts` afterwards, with a message naming the
 * resource type. Here: `included` is a list that is searched, `links` and `meta` are objects, and each
 * resource has a string `id`, object `attributes` and `relationships`, and the attributes Converge
 * reads with the types it assumes. Every other attribute passes as the service sent it.
 */
import { type TSchema, Type } from '@sinclair/typebox';
import { lazySchema, nullable } from '../http/shape.js';

const Optional = <T extends TSchema>(schema: T) => Type.Optional(schema);
const OptionalNullable = <T extends TSchema>(schema: T) => Type.Optional(nullable(schema));

/** Attributes of workspaces, projects, users and state versions that are read, not only compared. */
const Attributes = lazySchema(() =>
  Type.Object({
    name: OptionalNullable(Type.String()),
    username: OptionalNullable(Type.String()),
    locked: OptionalNullable(Type.Boolean()),
    'locked-reason': OptionalNullable(Type.String()),
    'tag-names': OptionalNullable(Type.Array(Type.String())),
    'vcs-repo': OptionalNullable(Type.Object({})),
    serial: OptionalNullable(Type.Integer()),
    'hosted-state-download-url': OptionalNullable(Type.String()),
    // `converge state show` lists them and adds up their counts.
    resources: OptionalNullable(
      Type.Array(
        Type.Object({
          type: OptionalNullable(Type.String()),
          name: OptionalNullable(Type.String()),
          module: OptionalNullable(Type.String()),
          count: OptionalNullable(Type.Integer()),
        }),
      ),
    ),
  }),
);

const Resource = lazySchema(() =>
  Type.Object({
    id: Type.String(),
    type: Optional(Type.String()),
    attributes: OptionalNullable(Attributes()),
    relationships: OptionalNullable(Type.Record(Type.String(), Type.Object({}))),
    links: OptionalNullable(Type.Object({})),
  }),
);

/** One resource, a list of them, or null: a JSON Schema type list, so ajv reports one type error. */
const ResourceOrList = lazySchema(() =>
  Type.Unsafe<unknown>({
    type: ['object', 'array', 'null'],
    required: ['id'],
    properties: Resource().properties,
    items: Resource(),
  }),
);

export const JsonApiDocumentShape = lazySchema(() =>
  Type.Object({
    data: Optional(ResourceOrList()),
    included: OptionalNullable(Type.Array(Resource())),
    links: OptionalNullable(Type.Object({})),
    meta: OptionalNullable(Type.Object({ pagination: OptionalNullable(Type.Object({})) })),
  }),
);
