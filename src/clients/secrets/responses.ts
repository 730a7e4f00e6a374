/**
 * What Converge reads of the secrets service's answers, as schemas checked before the client hands
 * them on (see `../http/shape.ts`). Directory answers come in the service's envelope, whose `data`
 * must be there (null when there is nothing); rekey answers are the status documents themselves.
 * Only what the client, the LDAP kinds and `converge rekey` read is typed; the rest may vary.
 */
import { type TSchema, Type } from '@sinclair/typebox';
import { lazySchema, nullable } from '../http/shape.js';

const Optional = <T extends TSchema>(schema: T) => Type.Optional(schema);
const StringList = lazySchema(() => nullable(Type.Array(Type.String())));
/** A list the service may show as an array or as the comma-separated string it was written as. */
const ListOrText = lazySchema(() =>
  Type.Unsafe<string[] | string | null>({
    type: ['array', 'string', 'null'],
    items: Type.String(),
  }),
);
/** A duration: seconds, or a Go duration text such as `"30s"`. */
const Duration = lazySchema(() =>
  Type.Unsafe<number | string | null>({ type: ['integer', 'string', 'null'] }),
);

/** The envelope of every directory answer; `data` holds the object, null for none. */
function envelope(data: TSchema) {
  return Type.Object({ data: nullable(data), warnings: Type.Optional(StringList()) });
}

/** `GET auth/<mount>/config`: compared field by field, durations in seconds, lists split. */
export const LdapConfigEnvelope = lazySchema(() =>
  envelope(
    Type.Object({
      url: Optional(nullable(Type.String())),
      userattr: Optional(nullable(Type.String())),
      groupattr: Optional(nullable(Type.String())),
      token_type: Optional(nullable(Type.String())),
      tls_min_version: Optional(nullable(Type.String())),
      tls_max_version: Optional(nullable(Type.String())),
      token_policies: Optional(ListOrText()),
      token_bound_cidrs: Optional(ListOrText()),
      connection_timeout: Optional(Duration()),
      request_timeout: Optional(Duration()),
      token_ttl: Optional(Duration()),
      token_max_ttl: Optional(Duration()),
      token_explicit_max_ttl: Optional(Duration()),
      token_period: Optional(Duration()),
    }),
  ),
);

/** `GET auth/<mount>/groups/:name`: its policies are normalised and compared. */
export const LdapGroupEnvelope = lazySchema(() =>
  envelope(Type.Object({ policies: Optional(ListOrText()) })),
);

/** `GET auth/<mount>/users/:username`: `groups` is split on commas, `policies` normalised. */
export const LdapUserEnvelope = lazySchema(() =>
  envelope(Type.Object({ policies: Optional(ListOrText()), groups: Optional(ListOrText()) })),
);

/** `LIST auth/<mount>/groups` and `…/users`: the names. */
export const KeyListEnvelope = lazySchema(() => envelope(Type.Object({ keys: Optional(StringList()) })));

/** A write's answer, when it has a body: only its warnings are read. */
export const WriteEnvelope = lazySchema(() => Type.Object({ warnings: Type.Optional(StringList()) }));

/**
 * `POST auth/<mount>/login/:username`: the token issued, its policies and metadata. `auth` may be
 * null here: the client then says plainly that the answer carries no token.
 */
export const LoginEnvelope = lazySchema(() =>
  Type.Object({
    auth: nullable(
      Type.Object({
        client_token: Optional(Type.String()),
        accessor: Optional(Type.String()),
        policies: Optional(StringList()),
        token_policies: Optional(StringList()),
        metadata: Optional(nullable(Type.Record(Type.String(), Type.String()))),
        lease_duration: Optional(Type.Integer()),
      }),
    ),
    warnings: Type.Optional(StringList()),
  }),
);

/** A rekey status: the progress counts are printed and subtracted, the nonce is sent back. */
export const RekeyStatusShape = lazySchema(() =>
  Type.Object({
    started: Type.Boolean(),
    nonce: Type.String(),
    t: Optional(Type.Integer()),
    n: Optional(Type.Integer()),
    progress: Optional(Type.Integer()),
    required: Optional(Type.Integer()),
    pgp_fingerprints: Optional(StringList()),
    backup: Optional(Type.Boolean()),
    verification_required: Optional(Type.Boolean()),
    verification_nonce: Optional(Type.String()),
  }),
);

/** The submission that completed a rekey: the new shares, each printed. */
const RekeyCompletionShape = lazySchema(() =>
  Type.Object({
    complete: Type.Literal(true),
    nonce: Type.String(),
    keys: Type.Array(Type.String()),
    keys_base64: Optional(Type.Array(Type.String())),
    pgp_fingerprints: Optional(StringList()),
    verification_required: Optional(Type.Boolean()),
    verification_nonce: Optional(Type.String()),
  }),
);

export const VerificationStatusShape = lazySchema(() =>
  Type.Object({
    nonce: Type.String(),
    started: Optional(Type.Boolean()),
    t: Optional(Type.Integer()),
    n: Optional(Type.Integer()),
    progress: Optional(Type.Integer()),
  }),
);

/**
 * `done` when the document says `complete: true`, else `pending`: an if/then/else rather than a
 * union, so a mismatch is reported against the one shape that applies, without anyOf noise.
 */
function completeOr(done: TSchema, pending: TSchema): TSchema {
  return Type.Unsafe({
    if: { type: 'object', required: ['complete'], properties: { complete: { const: true } } },
    then: done,
    else: pending,
  });
}

/** A rekey submission: still a status, or the completion with the new shares. */
export const RekeySubmitShape = lazySchema(() => completeOr(RekeyCompletionShape(), RekeyStatusShape()));

/** A verification submission: still a status, or `complete`. */
export const RekeyVerifyShape = lazySchema(() =>
  completeOr(Type.Object({ nonce: Type.String(), complete: Type.Literal(true) }), VerificationStatusShape()),
);

/** `DELETE sys/rekey-recovery-key/verify`: the new verification nonce, when the service sends one. */
export const VerifyCancelShape = lazySchema(() => Type.Object({ nonce: Optional(Type.String()) }));

/**
 * `GET sys/rekey/recovery-key-backup`: encrypted shares by key fingerprint. The spec gives one share
 * per fingerprint; Vault a list of them (a key given twice holds two): both are read, as lists.
 */
export const RekeyBackupShape = lazySchema(() =>
  Type.Object({
    nonce: Type.String(),
    keys: Type.Record(Type.String(), Type.Union([Type.String(), Type.Array(Type.String())])),
    keys_base64: Optional(
      nullable(Type.Record(Type.String(), Type.Union([Type.String(), Type.Array(Type.String())]))),
    ),
  }),
);
