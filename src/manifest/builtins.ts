/**
 * Kinds the manifest layer itself understands, as opposed to the resource kinds of the registry:
 * they configure Converge rather than describe objects in a service. Each one has a schema and a
 * `collect` step that turns a validated document into its part of the Manifest.
 */
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import type { DocumentLocator } from './positions.js';
import type { ManifestService } from './kinds.js';
import type {
  Manifest,
  ManifestConnection,
  ManifestMetadata,
  ManifestProblem,
  ManifestPruneScope,
} from './types.js';

/** A validated document, as the schema guarantees it. */
export interface ValidDocument {
  apiVersion: string;
  kind: string;
  metadata: ManifestMetadata;
  spec: Record<string, unknown>;
}

export interface BuiltinKind {
  readonly kind: string;
  readonly description: string;
  readonly nameSchema: TSchema;
  readonly specSchema: TSchema;
  /**
   * Adds the document's content to the manifest being built, or returns what is wrong with it.
   * `interpolated` holds the pointers of values that came from `${env:…}` or `${file:…}`.
   */
  collect(
    document: ValidDocument,
    positions: DocumentLocator,
    manifest: Manifest,
    interpolated: ReadonlySet<string>,
  ): ManifestProblem[];
}

/** Names of objects Converge itself defines (connections, prune scopes). */
export const LOCAL_NAME_SCHEMA = Type.String({
  pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$',
  maxLength: 63,
  description:
    'lowercase letters, digits and dashes, starting and ending with a letter or digit, at most 63 characters',
});

/**
 * A Connection's spec: the fields every service has, plus the settings services declare (a
 * workspace connection's `organization`), each allowed on any connection and checked against its
 * service in `collect`, so the schema stays one object that editors can complete.
 */
function connectionSpec(services: readonly ManifestService[]): TSchema {
  const settings: Record<string, TSchema> = {};
  for (const service of services) {
    for (const setting of service.settings ?? []) {
      settings[setting.key] = Type.Optional(
        Type.String({ minLength: 1, description: `${service.name} only: ${setting.description}` }),
      );
    }
  }
  return Type.Object(
    {
      service: Type.String({
        enum: services.map((s) => s.name),
        description: 'which service this connection reaches',
      }),
      // One pattern rather than `format: uri` plus a scheme check, so a bad address gets one error.
      // The scheme in either case, as URLs allow (RFC 3986, 3.1) and the environment's addresses are.
      address: Type.String({
        pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s/?#]+(/\\S*)?$',
        description: 'the http:// or https:// URL of the service',
      }),
      token: Type.Optional(
        Type.String({ minLength: 1, description: 'API token; use ${env:NAME} rather than writing it here' }),
      ),
      caCertificate: Type.Optional(
        Type.String({ minLength: 1, description: 'PEM CA bundle to trust, e.g. ${file:certs/ca.pem}' }),
      ),
      insecureSkipTlsVerify: Type.Optional(
        Type.Boolean({ description: 'skip TLS certificate verification (for tests only)' }),
      ),
      ...settings,
    },
    { additionalProperties: false },
  );
}

interface ConnectionDocumentSpec {
  service: string;
  address: string;
  token?: string;
  caCertificate?: string;
  insecureSkipTlsVerify?: boolean;
  [setting: string]: unknown;
}

const COMMON_CONNECTION_FIELDS = new Set([
  'service',
  'address',
  'token',
  'caCertificate',
  'insecureSkipTlsVerify',
]);

function connectionKind(services: readonly ManifestService[]): BuiltinKind {
  return {
    kind: 'Connection',
    description:
      "A named address and token for one service; resources pick it with metadata.connection instead of the environment's default.",
    nameSchema: LOCAL_NAME_SCHEMA,
    specSchema: connectionSpec(services),
    collect(document, positions, manifest, interpolated) {
      const spec = document.spec as ConnectionDocumentSpec;
      const connection: ManifestConnection = {
        name: document.metadata.name,
        service: spec.service,
        address: spec.address,
        addressPosition: positions.locate('/spec/address'),
        settings: {},
        source: positions.documentStart(),
      };
      // Any part of it: `http://author.example/${env:DB_PASSWORD}` would carry the variable away.
      if (interpolated.has('/spec/address')) connection.addressFromOutside = true;
      if (spec.token !== undefined) {
        connection.token = spec.token;
        // The CLI sends such a token only to an address the operator allowed (a manifest on a pull
        // request must not carry the runner's credentials elsewhere); a literal one is the author's own.
        if (interpolated.has('/spec/token')) connection.tokenFromOutside = true;
      }
      if (spec.caCertificate !== undefined) {
        connection.caCertificate = spec.caCertificate;
        connection.trustPosition = {
          field: 'caCertificate',
          position: positions.locate('/spec/caCertificate'),
        };
      }
      if (spec.insecureSkipTlsVerify !== undefined)
        connection.insecureSkipTlsVerify = spec.insecureSkipTlsVerify;
      if (spec.insecureSkipTlsVerify === true)
        connection.trustPosition = {
          field: 'insecureSkipTlsVerify',
          position: positions.locate('/spec/insecureSkipTlsVerify'),
        };
      const own = new Set(services.find((s) => s.name === spec.service)?.settings?.map((s) => s.key));
      for (const [key, value] of Object.entries(spec)) {
        if (COMMON_CONNECTION_FIELDS.has(key) || typeof value !== 'string') continue;
        if (own.has(key)) {
          connection.settings[key] = value;
          if (interpolated.has(`/spec/${key}`) && !connection.settingFromOutside)
            connection.settingFromOutside = { key, position: positions.locate(`/spec/${key}`) };
        } else
          return [
            {
              position: positions.locate(`/spec/${key}`),
              message: `${key} is not a setting of ${spec.service} connections${
                own.size > 0 ? ` (they have: ${[...own].join(', ')})` : ''
              }`,
            },
          ];
      }
      manifest.connections.push(connection);
      return [];
    },
  };
}

const PruneScopeSpec = Type.Object(
  {
    kind: Type.String({
      minLength: 1,
      description: 'the resource kind whose objects may be pruned, e.g. AclRole',
    }),
    namespace: Type.Optional(Type.String({ minLength: 1, description: 'only objects in this namespace' })),
    connection: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'only objects on this connection (default: the environment)',
      }),
    ),
    namePrefix: Type.Optional(
      Type.String({ minLength: 1, description: 'only objects whose names start with this' }),
    ),
    allowEmpty: Type.Optional(
      Type.Boolean({
        description:
          'allow --prune to delete every object in the scope when the manifest declares none in it (refused otherwise)',
      }),
    ),
  },
  { additionalProperties: false },
);

/**
 * Where `--prune` may delete. Services that keep no ownership marker (registry roles) are pruned only
 * inside scopes declared like this, so Converge never deletes what another team or tool manages.
 */
const pruneScopeKind: BuiltinKind = {
  kind: 'PruneScope',
  description:
    'Declares where `--prune` may delete objects the manifest no longer declares, for kinds whose service keeps no ownership marker.',
  nameSchema: LOCAL_NAME_SCHEMA,
  specSchema: PruneScopeSpec,
  collect(document, positions, manifest, interpolated) {
    const spec = document.spec as Static<typeof PruneScopeSpec>;
    const scope: ManifestPruneScope = {
      name: document.metadata.name,
      kind: spec.kind,
      source: positions.documentStart(),
    };
    // The namespace and the prefix go into the prune's list requests.
    const sent = ['namespace', 'namePrefix'].find((f) => interpolated.has(`/spec/${f}`));
    if (sent) scope.valueFromOutside = { key: sent, position: positions.locate(`/spec/${sent}`) };
    if (spec.namespace !== undefined) scope.namespace = spec.namespace;
    if (spec.connection !== undefined) scope.connection = spec.connection;
    if (spec.namePrefix !== undefined) scope.namePrefix = spec.namePrefix;
    if (spec.allowEmpty !== undefined) scope.allowEmpty = spec.allowEmpty;
    manifest.pruneScopes.push(scope);
    return [];
  },
};

const builtins = new WeakMap<readonly ManifestService[], readonly BuiltinKind[]>();

/** The built-in kinds for a list of services (the Connection schema names them), built once per list. */
export function builtinKinds(services: readonly ManifestService[]): readonly BuiltinKind[] {
  let found = builtins.get(services);
  if (!found) {
    found = [connectionKind(services), pruneScopeKind];
    builtins.set(services, found);
  }
  return found;
}

/** Names of the built-in kinds, whatever the services. */
export const BUILTIN_KIND_NAMES: readonly string[] = ['Connection', 'PruneScope'];
