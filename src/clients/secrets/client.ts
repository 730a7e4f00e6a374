/**
 * Client of the secrets service (spec `secrets-ldap-and-rekey.md`) over the shared HTTP layer: the
 * directory (LDAP) auth method (part 1) and the recovery-key rekey operations (part 2). The method
 * may be mounted at any path: every directory call takes the mount below `auth/` (`ldap` by default,
 * `corp/ldap` for a nested one).
 *
 * Choices where the spec says "not shown", following the real service (REFERENCE-BEHAVIOUR §2):
 * - The token goes in `X-Secrets-Token`; login is sent without it (it needs none).
 * - Lists use the `LIST` method as the spec writes it. An empty list answers 404 `{"errors":[]}`,
 *   which this client reads as "none".
 * - Reads of a missing object answer 404 `{"errors":[]}`: `undefined` here.
 * - Error bodies are `{"errors":["msg", ...]}`, read like the workspace service's (http/error-details):
 *   each message becomes a `details` entry of the `HttpStatusError`, all of them its `serviceMessage`.
 * - Configuration, group and user writes set the whole object at its path, so sending one again is
 *   harmless: they are retried like idempotent requests. A login issues a token and is not retried
 *   once sent.
 */
import type { SchemaSource } from '../http/shape.js';
import { errorDetails, parseErrorDocument } from '../http/error-details.js';
import { HttpClient, type HttpRequest, type HttpResponse } from '../http/client.js';
import { type ClientConnection, connectionHttpOptions, type ServiceHttp } from '../http/connection.js';
import { HttpStatusError, type ServiceErrorDetail } from '../http/errors.js';
import { HttpServiceClient } from '../http/service-client.js';
import { secretsAuth } from './auth.js';
import { DEFAULT_LDAP_MOUNT } from './types.js';
import {
  KeyListEnvelope,
  LdapConfigEnvelope,
  LdapGroupEnvelope,
  LdapUserEnvelope,
  LoginEnvelope,
  RekeyBackupShape,
  RekeyStatusShape,
  RekeySubmitShape,
  RekeyVerifyShape,
  VerificationStatusShape,
  VerifyCancelShape,
  WriteEnvelope,
} from './responses.js';
import type {
  LdapConfig,
  LdapConfigInput,
  LdapGroup,
  LdapUser,
  LoginAuth,
  LoginResult,
  SecretsEnvelope,
} from './types.js';

import type {
  RekeyBackup,
  RekeyCompletion,
  RekeyStartInput,
  RekeyStatus,
  VerificationCompletion,
  VerificationStatus,
} from './rekey-types.js';

export * from './rekey-types.js';
export * from './types.js';

export { SECRETS_TOKEN_HEADER, secretsAuth } from './auth.js';

const REKEY_INIT = '/v1/sys/rekey-recovery-key/init';
const REKEY_UPDATE = '/v1/sys/rekey-recovery-key/update';
const REKEY_VERIFY = '/v1/sys/rekey-recovery-key/verify';
const REKEY_BACKUP = '/v1/sys/rekey/recovery-key-backup';

export type SecretsConnection = ClientConnection;

export interface CallOptions {
  signal?: AbortSignal;
}

/**
 * A mount path below `auth/`, checked and encoded segment by segment: `corp/ldap` stays two segments,
 * and an empty, absolute or `..` path is refused before it could reach another endpoint.
 */
export function mountPath(mount: string): string {
  const trimmed = mount.replace(/^auth\//, '');
  const segments = trimmed.split('/');
  if (trimmed === '' || segments.some((s) => s === '' || s === '.' || s === '..')) {
    throw new TypeError(
      `secrets: invalid mount path "${mount}" (expected e.g. "ldap" or "corp/ldap", without leading or trailing "/")`,
    );
  }
  return `/v1/auth/${segments.map(encodeURIComponent).join('/')}`;
}

/**
 * The write-only fields of a directory configuration (the service never shows them): the bind
 * password and the client key are secret, and the certificate is treated alike, so that a service
 * echoing the refused body back cannot print any of them.
 */
const LDAP_CONFIG_SECRET_FIELDS = ['bindpass', 'client_tls_key', 'client_tls_cert'] as const;

function ldapConfigSecrets(config: LdapConfigInput): string[] {
  const fields = config as Partial<Record<(typeof LDAP_CONFIG_SECRET_FIELDS)[number], unknown>>;
  return LDAP_CONFIG_SECRET_FIELDS.map((f) => fields[f]).filter(
    (v): v is string => typeof v === 'string' && v !== '',
  );
}

function segment(value: string, what: string): string {
  if (!value) throw new TypeError(`secrets: ${what} must not be empty`);
  return encodeURIComponent(value);
}

/**
 * A 404 whose messages say the service has no handler for the path is about the mount, not a missing
 * object: never "none", and the error asks whether the auth method is mounted where the call said.
 */
function missingMount(
  path: string,
  details: readonly ServiceErrorDetail[],
  bodyText: string,
): { note?: string } | undefined {
  // The service answers a missing entry with its JSON error document (`{"errors":[]}`): a 404 in
  // another form came from something else at that address (a path in CONVERGE_SECRETS_ADDR, `…/v1`,
  // doubled the API's own), and taken as "none" it planned every directory object as a create.
  if (!isErrorDocument(bodyText))
    return {
      note: "this is not the secrets service answering: check CONVERGE_SECRETS_ADDR (the service's base address, without /v1)",
    };
  if (!details.some((d) => /no handler for route|unsupported path/.test(d.detail ?? ''))) return undefined;
  const mount = /^\/v1\/auth\/(.+?)\/(config|groups|users|login)(\/|$)/.exec(path)?.[1];
  return mount ? { note: `is the directory auth method mounted at auth/${decodeURIComponent(mount)}?` } : {};
}

/** Whether a body is the service's own error document: a JSON object with an `errors` list. */
function isErrorDocument(bodyText: string): boolean {
  try {
    const body = JSON.parse(bodyText) as { errors?: unknown } | null;
    return typeof body === 'object' && body !== null && Array.isArray(body.errors);
  } catch {
    return false;
  }
}

/** The token header, `{"errors":[…]}` bodies read into a message and `details`, the mount hint. */
const SECRETS_HTTP: ServiceHttp = {
  service: 'secrets',
  authHeaders: secretsAuth,
  parseError: parseErrorDocument,
  errorDetails,
  routeMissing: missingMount,
};

export class SecretsClient extends HttpServiceClient {
  static fromConnection(connection: SecretsConnection): SecretsClient {
    return new SecretsClient(new HttpClient(connectionHttpOptions(connection, SECRETS_HTTP)));
  }

  // Configuration

  /** `GET auth/<mount>/config`; undefined when the service has none to show (404). */
  async readLdapConfig(mount = DEFAULT_LDAP_MOUNT, opts: CallOptions = {}): Promise<LdapConfig | undefined> {
    return this.readData<LdapConfig>(`${mountPath(mount)}/config`, opts, LdapConfigEnvelope);
  }

  /**
   * `POST auth/<mount>/config`. The service updates the stored configuration with the fields sent
   * and keeps the others, so callers that mean "exactly this" send every field.
   */
  async writeLdapConfig(mount: string, config: LdapConfigInput, opts: CallOptions = {}): Promise<string[]> {
    return this.write(`${mountPath(mount)}/config`, config, opts, ldapConfigSecrets(config));
  }

  // Groups

  /** `LIST auth/<mount>/groups`: the group names (none: empty). */
  listLdapGroups(mount = DEFAULT_LDAP_MOUNT, opts: CallOptions = {}): Promise<string[]> {
    return this.list(`${mountPath(mount)}/groups`, opts);
  }

  readLdapGroup(mount: string, name: string, opts: CallOptions = {}): Promise<LdapGroup | undefined> {
    const path = `${mountPath(mount)}/groups/${segment(name, 'group name')}`;
    return this.readData<LdapGroup>(path, opts, LdapGroupEnvelope);
  }

  /** `POST auth/<mount>/groups/:name`; policies go as the comma-separated string the spec asks for. */
  writeLdapGroup(mount: string, name: string, group: { policies: string[] }, opts: CallOptions = {}) {
    return this.write(
      `${mountPath(mount)}/groups/${segment(name, 'group name')}`,
      { policies: group.policies.join(',') },
      opts,
    );
  }

  async deleteLdapGroup(mount: string, name: string, opts: CallOptions = {}): Promise<void> {
    const path = `${mountPath(mount)}/groups/${segment(name, 'group name')}`;
    await this.http.request(this.request({ method: 'DELETE', path }, opts));
  }

  // Users

  /** `LIST auth/<mount>/users`: the usernames (none: empty). */
  listLdapUsers(mount = DEFAULT_LDAP_MOUNT, opts: CallOptions = {}): Promise<string[]> {
    return this.list(`${mountPath(mount)}/users`, opts);
  }

  readLdapUser(mount: string, username: string, opts: CallOptions = {}): Promise<LdapUser | undefined> {
    const path = `${mountPath(mount)}/users/${segment(username, 'username')}`;
    return this.readData<LdapUser>(path, opts, LdapUserEnvelope);
  }

  /** `POST auth/<mount>/users/:username`; policies and groups as comma-separated strings. */
  writeLdapUser(
    mount: string,
    username: string,
    user: { policies: string[]; groups: string[] },
    opts: CallOptions = {},
  ) {
    return this.write(
      `${mountPath(mount)}/users/${segment(username, 'username')}`,
      { policies: user.policies.join(','), groups: user.groups.join(',') },
      opts,
    );
  }

  async deleteLdapUser(mount: string, username: string, opts: CallOptions = {}): Promise<void> {
    const path = `${mountPath(mount)}/users/${segment(username, 'username')}`;
    await this.http.request(this.request({ method: 'DELETE', path }, opts));
  }

  // Login

  /**
   * `POST auth/<mount>/login/:username` with the password, without the client's token. The password
   * is scrubbed from any error text, like the token.
   */
  async login(
    mount: string,
    username: string,
    password: string,
    opts: CallOptions = {},
  ): Promise<LoginResult> {
    const path = `${mountPath(mount)}/login/${segment(username, 'username')}`;
    const req = this.request(
      { method: 'POST', path, body: { password }, authenticate: false, idempotent: false },
      opts,
      [password],
    );
    const res = await this.http.requestJson<SecretsEnvelope<unknown>>(req, LoginEnvelope, ENVELOPE);
    const auth = res.body!.auth as LoginAuth | null;
    if (!auth || typeof auth.client_token !== 'string')
      throw this.http.unexpected(req, res.status, 'the login answer has no auth.client_token');
    // Warnings are the service's text too, printed under a successful login.
    const warnings = this.http.serviceWarnings(req, res.body!.warnings);
    return { auth, warnings };
  }

  // Recovery-key rekey (spec part 2). The service answers these with the status document itself;
  // a body that wraps it in the envelope's `data` is read too.

  /** `GET sys/rekey-recovery-key/init`: the rekey in progress, or `started: false`. */
  async rekeyStatus(opts: CallOptions = {}): Promise<RekeyStatus> {
    return this.sysDocument<RekeyStatus>({ method: 'GET', path: REKEY_INIT }, opts, RekeyStatusShape);
  }

  /** `PUT sys/rekey-recovery-key/init`: starts a rekey and returns its status (with the new nonce). */
  async rekeyStart(input: RekeyStartInput, opts: CallOptions = {}): Promise<RekeyStatus> {
    const req = this.request({ method: 'PUT', path: REKEY_INIT, body: input, idempotent: false }, opts);
    const res = await this.http.request(req);
    const status = sysBody<RekeyStatus>(res);
    // Some services answer the start with the status, others with nothing: then it is read.
    if (!status?.nonce) return this.rekeyStatus(opts);
    return this.http.checkBody<RekeyStatus>(req, res.status, RekeyStatusShape, status);
  }

  /** `DELETE sys/rekey-recovery-key/init`: cancels the rekey; the current shares stay valid. */
  async rekeyCancel(opts: CallOptions = {}): Promise<void> {
    await this.http.request(this.request({ method: 'DELETE', path: REKEY_INIT }, opts));
  }

  /**
   * `PUT sys/rekey-recovery-key/update` with one share of the current recovery key. The share is
   * scrubbed from any error, like the token. Returns the status, or the completion with the new shares.
   */
  async rekeySubmit(
    key: string,
    nonce: string,
    opts: CallOptions = {},
  ): Promise<RekeyStatus | RekeyCompletion> {
    return this.submitShare<RekeyStatus | RekeyCompletion>(REKEY_UPDATE, key, nonce, opts, RekeySubmitShape);
  }

  /** `GET sys/rekey-recovery-key/verify`. */
  async rekeyVerifyStatus(opts: CallOptions = {}): Promise<VerificationStatus> {
    return this.sysDocument<VerificationStatus>(
      { method: 'GET', path: REKEY_VERIFY },
      opts,
      VerificationStatusShape,
    );
  }

  /** `PUT sys/rekey-recovery-key/verify` with one share of the new set and the verification nonce. */
  async rekeyVerify(
    key: string,
    nonce: string,
    opts: CallOptions = {},
  ): Promise<VerificationStatus | VerificationCompletion> {
    return this.submitShare<VerificationStatus | VerificationCompletion>(
      REKEY_VERIFY,
      key,
      nonce,
      opts,
      RekeyVerifyShape,
    );
  }

  /** `DELETE sys/rekey-recovery-key/verify`: restarts verification with a new nonce. */
  async rekeyVerifyCancel(opts: CallOptions = {}): Promise<VerificationStatus | undefined> {
    const req = this.request({ method: 'DELETE', path: REKEY_VERIFY }, opts);
    const res = await this.http.request(req);
    const status = sysBody<VerificationStatus>(res);
    return status && this.http.checkBody(req, res.status, VerifyCancelShape, status);
  }

  /** `GET sys/rekey/recovery-key-backup`; undefined when none is stored. */
  async rekeyBackup(opts: CallOptions = {}): Promise<RekeyBackup | undefined> {
    try {
      const backup = await this.sysDocument<WireRekeyBackup>(
        { method: 'GET', path: REKEY_BACKUP },
        opts,
        RekeyBackupShape,
      );
      return {
        nonce: backup.nonce,
        keys: sharesByFingerprint(backup.keys),
        ...(backup.keys_base64 ? { keys_base64: sharesByFingerprint(backup.keys_base64) } : {}),
      };
    } catch (error) {
      // The service answers 400 "no backed-up keys found" rather than 404 when there is none.
      if (error instanceof HttpStatusError && /no backed-up keys/i.test(error.serviceMessage ?? ''))
        return undefined;
      throw error;
    }
  }

  /** `DELETE sys/rekey/recovery-key-backup`. */
  async rekeyBackupDelete(opts: CallOptions = {}): Promise<void> {
    await this.http.request(this.request({ method: 'DELETE', path: REKEY_BACKUP }, opts));
  }

  // Helpers

  /**
   * `PUT` of one key share with its nonce. Never retried: a resent share counts twice or is refused
   * as already given. The share is scrubbed from any error, like the token.
   */
  private submitShare<T>(
    path: string,
    key: string,
    nonce: string,
    opts: CallOptions,
    schema: SchemaSource,
  ): Promise<T> {
    return this.sysDocument<T>(
      { method: 'PUT', path, body: { key, nonce }, idempotent: false },
      opts,
      schema,
      [key],
    );
  }

  private async sysDocument<T>(
    req: HttpRequest,
    opts: CallOptions,
    schema: SchemaSource,
    secrets: readonly string[] = [],
  ): Promise<T> {
    const sent = this.request(req, opts, secrets);
    const res = await this.http.request(sent);
    const body = sysBody<T>(res);
    if (body === undefined) throw this.http.unexpected(sent, res.status, 'expected a JSON document');
    return this.http.checkBody<T>(sent, res.status, schema, body);
  }

  /** `GET` of an enveloped object; undefined on 404 (the service's "none"). */
  private async readData<T>(path: string, opts: CallOptions, schema: SchemaSource): Promise<T | undefined> {
    const req = this.request({ method: 'GET', path }, opts);
    const res = await this.http.requestOptional<SecretsEnvelope<T>>(req, schema, ENVELOPE);
    return res.body?.data ?? undefined;
  }

  /** `LIST` of the names below `path`; an empty list answers 404 (see the module comment). */
  private async list(path: string, opts: CallOptions): Promise<string[]> {
    const req = this.request({ method: 'LIST', path }, opts);
    const res = await this.http.requestOptional<SecretsEnvelope<{ keys?: string[] | null }>>(
      req,
      KeyListEnvelope,
      ENVELOPE,
    );
    return res.body?.data?.keys ?? [];
  }

  /** A write; returns the service's warnings (it answers 204 without a body when it has none). */
  private async write(
    path: string,
    body: unknown,
    opts: CallOptions,
    secrets: readonly string[] = [],
  ): Promise<string[]> {
    const req = this.request({ method: 'POST', path, body, idempotent: true }, opts, secrets);
    const res = await this.http.request(req);
    if (res.status === 204 || res.body === undefined || typeof res.body === 'string') return [];
    const answer = this.http.checkBody<Partial<SecretsEnvelope>>(req, res.status, WriteEnvelope, res.body);
    return this.http.serviceWarnings(req, answer.warnings);
  }

  /**
   * `req` with what every call of this client sends: JSON, the caller's signal, and the secrets the
   * request carries (scrubbed by the HTTP layer from every error and warning about it).
   */
  private request(req: HttpRequest, opts: CallOptions, secrets: readonly string[] = []): HttpRequest {
    return {
      ...req,
      accept: 'application/json',
      ...(secrets.length > 0 ? { secrets } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
    };
  }
}

/** What a directory answer carries its object in, for the "empty body" error. */
const ENVELOPE = 'a response envelope';

/** The document of a sys answer: top-level fields, or the envelope's `data`. */
function sysBody<T>(res: HttpResponse): T | undefined {
  if (typeof res.body !== 'object' || res.body === null) return undefined;
  const body = res.body as Record<string, unknown>;
  const data = body.data;
  const wrapped = typeof data === 'object' && data !== null && !('nonce' in body) && !('started' in body);
  return (wrapped ? data : body) as T;
}

/** The backup as either form sends it: one share (the spec) or a list (Vault) per fingerprint. */
interface WireRekeyBackup {
  nonce: string;
  keys: Record<string, string | string[]>;
  keys_base64?: Record<string, string | string[]> | null;
}

function sharesByFingerprint(shares: Record<string, string | string[]>): Record<string, string[]> {
  return Object.fromEntries(
    Object.entries(shares).map(([fingerprint, held]) => [
      fingerprint,
      typeof held === 'string' ? [held] : held,
    ]),
  );
}
