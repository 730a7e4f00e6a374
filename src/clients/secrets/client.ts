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
import type { TSchema } from '@sinclair/typebox';
import type { Dispatcher } from 'undici';
import { printable } from '../../common/printable.js';
import { withQuery } from '../http/body.js';
import { errorDetails, parseErrorDocument } from '../http/error-details.js';
import { HttpClient, type HttpClientOptions, type HttpRequest, type HttpResponse } from '../http/client.js';
import { HttpStatusError, UnexpectedResponseError } from '../http/errors.js';
import { checkShape } from '../http/shape.js';
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
import { scrubSecrets } from '../http/scrub.js';
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

export const SECRETS_TOKEN_HEADER = 'X-Secrets-Token';
export const DEFAULT_LDAP_MOUNT = 'ldap';

const REKEY_INIT = '/v1/sys/rekey-recovery-key/init';
const REKEY_UPDATE = '/v1/sys/rekey-recovery-key/update';
const REKEY_VERIFY = '/v1/sys/rekey-recovery-key/verify';
const REKEY_BACKUP = '/v1/sys/rekey/recovery-key-backup';

/** The header that carries the token on every administrative request. */
export function secretsAuth(token: string): Record<string, string> {
  return { [SECRETS_TOKEN_HEADER]: token };
}

export interface SecretsConnection {
  address: string;
  token?: string;
  caCertificate?: string;
  insecureSkipTlsVerify?: boolean;
  dispatcher?: Dispatcher;
  addressSource?: string;
  tokenSource?: string;
  http?: Partial<Omit<HttpClientOptions, 'service' | 'baseUrl' | 'token'>>;
}

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

/** Client errors the client turns into typed errors itself (with `details` and a mount hint). */
const CLIENT_ERRORS = [400, 401, 403, 404, 405, 409, 412, 422];

export class SecretsClient {
  readonly http: HttpClient;
  readonly #token: string | undefined;

  constructor(http: HttpClient, token?: string) {
    this.http = http;
    this.#token = token;
  }

  static fromConnection(connection: SecretsConnection): SecretsClient {
    const { http: extra, ...c } = connection;
    const http = new HttpClient({
      ...extra,
      authHeaders: secretsAuth,
      service: 'secrets',
      baseUrl: c.address,
      ...(c.token ? { token: c.token } : {}),
      parseError: parseErrorDocument,
      ...(c.caCertificate ? { caCertificate: c.caCertificate } : {}),
      ...(c.insecureSkipTlsVerify ? { insecureSkipTlsVerify: true } : {}),
      ...(c.dispatcher ? { dispatcher: c.dispatcher } : {}),
      ...(c.addressSource ? { addressSource: c.addressSource } : {}),
      ...(c.tokenSource ? { tokenSource: c.tokenSource } : {}),
    });
    return new SecretsClient(http, c.token);
  }

  get requestCount(): number {
    return this.http.requestCount;
  }

  close(): Promise<void> {
    return this.http.close();
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
    await this.send(
      { method: 'DELETE', path: `${mountPath(mount)}/groups/${segment(name, 'group name')}` },
      opts,
    );
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
    await this.send(
      { method: 'DELETE', path: `${mountPath(mount)}/users/${segment(username, 'username')}` },
      opts,
    );
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
    const res = await this.send(
      { method: 'POST', path, body: { password }, authenticate: false, idempotent: false },
      opts,
      [password],
    );
    const envelope = this.envelope<unknown>(res, 'POST', path);
    this.checked(LoginEnvelope, envelope, res, 'POST', path, [password]);
    const auth = envelope.auth as LoginAuth | null;
    if (!auth || typeof auth.client_token !== 'string') {
      throw new UnexpectedResponseError({
        service: 'secrets',
        method: 'POST',
        path,
        status: res.status,
        problem: 'the login answer has no auth.client_token',
      });
    }
    // Warnings are the service's text too, printed under a successful login: scrubbed like an error,
    // and one printable line each, so they cannot forge output lines.
    const warnings = (envelope.warnings ?? []).map((w) =>
      printable(scrubSecrets(String(w), [this.#token, password])),
    );
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
    const res = await this.send({ method: 'PUT', path: REKEY_INIT, body: input, idempotent: false }, opts);
    const status = this.sysBody<RekeyStatus>(res);
    // Some services answer the start with the status, others with nothing: then it is read.
    if (!status?.nonce) return this.rekeyStatus(opts);
    return this.checked<RekeyStatus>(RekeyStatusShape, status, res, 'PUT', REKEY_INIT);
  }

  /** `DELETE sys/rekey-recovery-key/init`: cancels the rekey; the current shares stay valid. */
  async rekeyCancel(opts: CallOptions = {}): Promise<void> {
    await this.send({ method: 'DELETE', path: REKEY_INIT }, opts);
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
    return this.sysDocument<RekeyStatus | RekeyCompletion>(
      { method: 'PUT', path: REKEY_UPDATE, body: { key, nonce }, idempotent: false },
      opts,
      RekeySubmitShape,
      [key],
    );
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
    return this.sysDocument<VerificationStatus | VerificationCompletion>(
      { method: 'PUT', path: REKEY_VERIFY, body: { key, nonce }, idempotent: false },
      opts,
      RekeyVerifyShape,
      [key],
    );
  }

  /** `DELETE sys/rekey-recovery-key/verify`: restarts verification with a new nonce. */
  async rekeyVerifyCancel(opts: CallOptions = {}): Promise<VerificationStatus | undefined> {
    const res = await this.send({ method: 'DELETE', path: REKEY_VERIFY }, opts);
    const status = this.sysBody<VerificationStatus>(res);
    return status && this.checked(VerifyCancelShape, status, res, 'DELETE', REKEY_VERIFY);
  }

  /** `GET sys/rekey/recovery-key-backup`; undefined when none is stored. */
  async rekeyBackup(opts: CallOptions = {}): Promise<RekeyBackup | undefined> {
    try {
      return await this.sysDocument<RekeyBackup>(
        { method: 'GET', path: REKEY_BACKUP },
        opts,
        RekeyBackupShape,
      );
    } catch (error) {
      // The service answers 400 "no backed-up keys found" rather than 404 when there is none.
      if (error instanceof HttpStatusError && /no backed-up keys/i.test(error.serviceMessage ?? ''))
        return undefined;
      throw error;
    }
  }

  /** `DELETE sys/rekey/recovery-key-backup`. */
  async rekeyBackupDelete(opts: CallOptions = {}): Promise<void> {
    await this.send({ method: 'DELETE', path: REKEY_BACKUP }, opts);
  }

  // Helpers

  private async sysDocument<T>(
    req: HttpRequest,
    opts: CallOptions,
    schema: TSchema,
    secrets: readonly string[] = [],
  ): Promise<T> {
    const res = await this.send(req, opts, secrets);
    const body = this.sysBody<T>(res);
    if (body === undefined) {
      throw new UnexpectedResponseError({
        service: 'secrets',
        method: req.method,
        path: req.path,
        status: res.status,
        problem: 'expected a JSON document',
      });
    }
    return this.checked<T>(schema, body, res, req.method, req.path, secrets);
  }

  /** The document of a sys answer: top-level fields, or the envelope's `data`. */
  private sysBody<T>(res: HttpResponse): T | undefined {
    if (typeof res.body !== 'object' || res.body === null) return undefined;
    const body = res.body as Record<string, unknown>;
    const data = body.data;
    const wrapped = typeof data === 'object' && data !== null && !('nonce' in body) && !('started' in body);
    return (wrapped ? data : body) as T;
  }

  private async readData<T>(path: string, opts: CallOptions, schema: TSchema): Promise<T | undefined> {
    const res = await this.send({ method: 'GET', path }, opts, [], true);
    if (res.status === 404) return undefined;
    const envelope = this.envelope<T>(res, 'GET', path);
    return this.checked<SecretsEnvelope<T>>(schema, envelope, res, 'GET', path).data ?? undefined;
  }

  private async list(path: string, opts: CallOptions): Promise<string[]> {
    const res = await this.send({ method: 'LIST', path }, opts, [], true);
    if (res.status === 404) return [];
    const envelope = this.envelope<{ keys?: string[] | null }>(res, 'LIST', path);
    return this.checked<typeof envelope>(KeyListEnvelope, envelope, res, 'LIST', path).data?.keys ?? [];
  }

  /** A write; returns the service's warnings (it answers 204 without a body when it has none). */
  private async write(
    path: string,
    body: unknown,
    opts: CallOptions,
    secrets: readonly string[] = [],
  ): Promise<string[]> {
    const res = await this.send({ method: 'POST', path, body, idempotent: true }, opts, secrets);
    if (res.status === 204 || res.body === undefined || typeof res.body === 'string') return [];
    const warnings =
      this.checked<Partial<SecretsEnvelope>>(WriteEnvelope, res.body, res, 'POST', path, secrets).warnings ??
      [];
    return warnings.map((w) => printable(scrubSecrets(String(w), [this.#token, ...secrets])));
  }

  /** `body` as `T` when it has the shape `schema` describes; an `UnexpectedResponseError` otherwise. */
  private checked<T>(
    schema: TSchema,
    body: unknown,
    res: HttpResponse,
    method: string,
    path: string,
    secrets: readonly string[] = [],
  ): T {
    return checkShape<T>(schema, body, {
      service: 'secrets',
      method,
      path,
      status: res.status,
      secrets: [this.#token, ...secrets],
    });
  }

  private envelope<T>(res: HttpResponse, method: string, path: string): SecretsEnvelope<T> {
    if (typeof res.body !== 'object' || res.body === null) {
      throw new UnexpectedResponseError({
        service: 'secrets',
        method,
        path,
        status: res.status,
        problem: 'expected a JSON response envelope',
      });
    }
    return res.body as SecretsEnvelope<T>;
  }

  /**
   * Sends one request; 4xx become `HttpStatusError` with the service's messages as `details`, and a
   * 404 on an unknown route names the mount. `notFoundOk`: a 404 is returned instead (reads, lists).
   */
  private async send(
    req: HttpRequest,
    opts: CallOptions,
    secrets: readonly string[] = [],
    notFoundOk = false,
  ): Promise<HttpResponse> {
    // The HTTP layer scrubs them from what it builds itself (5xx, retries, network errors), and the
    // error below from the 4xx this client reads.
    const res = await this.http.request({
      ...req,
      accept: 'application/json',
      okStatuses: CLIENT_ERRORS,
      ...(secrets.length > 0 ? { secrets } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    if (res.status < 400) return res;
    const details = errorDetails(res.body);
    const routeMissing =
      res.status === 404 && details.some((d) => /no handler for route|unsupported path/.test(d.detail ?? ''));
    if (res.status === 404 && notFoundOk && !routeMissing) return res;
    const text = typeof res.body === 'string' ? res.body : JSON.stringify(res.body ?? '');
    const serviceMessage = parseErrorDocument(res.status, text, res.headers['content-type']);
    const mount = /^\/v1\/auth\/(.+?)\/(config|groups|users|login)(\/|$)/.exec(req.path)?.[1];
    throw new HttpStatusError({
      service: 'secrets',
      method: req.method,
      path: withQuery(req.path, req.query),
      secrets: [this.#token, ...secrets],
      status: res.status,
      serviceMessage,
      note:
        routeMissing && mount
          ? `is the directory auth method mounted at auth/${decodeURIComponent(mount)}?`
          : req.authenticate === false
            ? undefined
            : this.http.tokenHint(res.status, serviceMessage),
      details,
    });
  }
}
