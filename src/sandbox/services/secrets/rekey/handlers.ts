/**
 * The recovery-key rekey endpoints under `/v1/sys/`, as the spec lists them:
 *
 * | path                                | methods             | answer                                   |
 * | ----------------------------------- | ------------------- | ---------------------------------------- |
 * | `sys/rekey-recovery-key/init`       | GET, PUT/POST, DELETE | status 200; status 200; 204            |
 * | `sys/rekey-recovery-key/update`     | any (PUT)           | status, or the completion, 200           |
 * | `sys/rekey-recovery-key/verify`     | GET, PUT/POST, DELETE | verification status / completion, 200  |
 * | `sys/rekey/recovery-key-backup`     | read, delete        | envelope `data: {nonce, keys, keys_base64}` 200; 204 |
 * | `sys/rekey-recovery-key/backup`     | read, delete        | the same (the spelling of the spec's start description) |
 *
 * init, update and verify are the real service's raw HTTP handlers (`http/sys_rekey.go`): bare JSON
 * documents, not the response envelope; PUT init answers with the status document
 * (`handleSysRekeyInitPut` ends with `handleSysRekeyInitGet`); DELETE init answers `respondOk(w, nil)`,
 * 204; DELETE verify answers with the verification status; update takes any method (its handler does
 * not look at it); other methods on init and verify are 405 `{"errors":[]}`. The backup paths are
 * `sys/` backend paths (`vault/logical_system.go` `handleRekeyRetrieve`/`handleRekeyDelete`): the
 * envelope, 400 "no backed-up keys found" when none, 204 on delete, 405 "unsupported operation" for
 * other operations.
 *
 * Who may take which step is `authorization.ts`: status reads and submissions need no token (the
 * shares and the nonce authorise them); start, cancel, cancel verification and the backup need the
 * root token (403 "permission denied" before anything else).
 */
import type { SandboxRequest, SandboxResponse } from '../../../core/http.js';
import type { Router } from '../../../core/router.js';
import type { SecretsAccess } from '../access.js';
import { SECRETS_METHODS } from '../handlers.js';
import { operationOf, readJsonBody } from '../request.js';
import {
  envelope,
  errorResponse,
  fromError,
  noContent,
  SecretsError,
  UNSUPPORTED_OPERATION,
  vaultJson,
} from '../vault.js';
import { authorizeRekeyStep, type RekeyStep } from './authorization.js';
import type { RekeyCeremony } from './ceremony.js';
import { decodeKey } from './shamir.js';
import type { RekeyInitRequest } from './state.js';

const PREFIX = '/v1/sys/rekey-recovery-key';
const BACKUP_PATHS = ['/v1/sys/rekey/recovery-key-backup', `${PREFIX}/backup`];

type Handler = (req: SandboxRequest) => Promise<SandboxResponse>;

/** The step's authorization first (before the body is read), then the handler; errors as the real ones. */
function guarded(access: SecretsAccess, handler: Handler, step?: RekeyStep): Handler {
  return async (req) => {
    try {
      if (step) authorizeRekeyStep(access, req, step);
      return await handler(req);
    } catch (err) {
      if (err instanceof SecretsError) return fromError(err);
      throw err;
    }
  };
}

const ok = (value: unknown) => vaultJson(200, value);

export function registerRekeyRoutes(
  router: Router,
  deps: { ceremony: RekeyCeremony; access: SecretsAccess },
): void {
  const { ceremony, access } = deps;
  const step = (name: RekeyStep, handler: Handler) => guarded(access, handler, name);

  const initPut = step('start', async (req) =>
    ok(await ceremony.start(initRequestOf(await readJsonBody(req)))),
  );
  router.add(`${PREFIX}/init`, {
    GET: step('status', async () => ok(await ceremony.status())),
    PUT: initPut,
    POST: initPut,
    DELETE: step('cancel', async (req) => {
      await ceremony.cancel(await cancelNonceOf(req));
      return noContent();
    }),
  });

  const update = step('submit', async (req) => {
    const { key, nonce } = await submissionOf(req, 'RekeyUpdateRequest');
    return ok(await ceremony.update(key, nonce));
  });
  router.add(`${PREFIX}/update`, Object.fromEntries(SECRETS_METHODS.map((m) => [m, update])));

  const verifyPut = step('verify', async (req) => {
    const { key, nonce } = await submissionOf(req, 'RekeyVerificationUpdateRequest');
    return ok(await ceremony.verify(key, nonce));
  });
  router.add(`${PREFIX}/verify`, {
    GET: step('verification-status', async () => ok(await ceremony.verificationStatus())),
    PUT: verifyPut,
    POST: verifyPut,
    DELETE: step('cancel-verification', async () => ok(await ceremony.restartVerification())),
  });

  // A sys/ backend path: the operation first (a bad `?list` is 400), then the token.
  const backup = guarded(access, async (req) => {
    const op = operationOf(req);
    authorizeRekeyStep(access, req, 'backup');
    if (op === 'read') {
      const saved = ceremony.backup();
      if (!saved) throw new SecretsError(400, 'no backed-up keys found');
      const keysBase64 = Object.fromEntries(
        Object.entries(saved.keys).map(([fp, list]) => [
          fp,
          list.map((hex) => Buffer.from(hex, 'hex').toString('base64')),
        ]),
      );
      return envelope({ data: { nonce: saved.nonce, keys: saved.keys, keys_base64: keysBase64 } }, 'system');
    }
    if (op === 'delete') {
      ceremony.deleteBackup();
      return noContent();
    }
    return errorResponse(405, [UNSUPPORTED_OPERATION]);
  });
  for (const path of BACKUP_PATHS)
    router.add(path, Object.fromEntries(SECRETS_METHODS.map((m) => [m, backup])));
}

// --- request bodies, decoded as Go's encoding/json fills the real request structs -------------------

function goTypeOf(value: unknown): string {
  if (typeof value === 'string') return 'string';
  if (typeof value === 'number') return `number ${value}`;
  if (typeof value === 'boolean') return 'bool';
  return Array.isArray(value) ? 'array' : 'object';
}

/**
 * `json: cannot unmarshal ...` as the real HTTP layer reports it (400 "failed to parse JSON input:
 * ..."). UNCONFIRMED: the exact wording of Go's message for every type (the number's text for ints).
 */
function unmarshalError(value: unknown, struct: string, field: string, goType: string): SecretsError {
  const shown =
    typeof value === 'number' && goType !== 'int' && goType !== 'uint' ? 'number' : goTypeOf(value);
  return new SecretsError(
    400,
    `failed to parse JSON input: json: cannot unmarshal ${shown} into Go struct field ${struct}.${field} of type ${goType}`,
  );
}

/**
 * A JSON field into a Go field: null or absent leaves the zero value. Go matches names exactly first,
 * then without regard to case.
 */
function goField<T>(
  body: Record<string, unknown>,
  struct: string,
  field: string,
  goType: 'int' | 'uint' | 'bool' | 'string' | '[]string',
  zero: T,
): T {
  const name = field in body ? field : Object.keys(body).find((k) => k.toLowerCase() === field);
  const value = name === undefined ? undefined : body[name];
  if (value === undefined || value === null) return zero;
  switch (goType) {
    case 'int':
    case 'uint':
      if (typeof value === 'number' && Number.isInteger(value) && (goType === 'int' || value >= 0)) {
        return value as T;
      }
      break;
    case 'bool':
      if (typeof value === 'boolean') return value as T;
      break;
    case 'string':
      if (typeof value === 'string') return value as T;
      break;
    case '[]string':
      if (Array.isArray(value)) {
        const bad = value.find((v) => typeof v !== 'string' && v !== null);
        if (bad !== undefined) throw unmarshalError(bad, struct, field, 'string');
        return value.map((v) => (v === null ? '' : v)) as T;
      }
      break;
  }
  throw unmarshalError(value, struct, field, goType);
}

function initRequestOf(body: Record<string, unknown>): RekeyInitRequest {
  const S = 'RekeyRequest';
  return {
    secret_shares: goField(body, S, 'secret_shares', 'int', 0),
    secret_threshold: goField(body, S, 'secret_threshold', 'int', 0),
    stored_shares: goField(body, S, 'stored_shares', 'uint', 0),
    pgp_keys: goField<string[]>(body, S, 'pgp_keys', '[]string', []),
    backup: goField(body, S, 'backup', 'bool', false),
    require_verification: goField(body, S, 'require_verification', 'bool', false),
  };
}

/** `{key, nonce}` of an update or a verification, with the real HTTP layer's checks of the key. */
async function submissionOf(
  req: SandboxRequest,
  struct: string,
): Promise<{ key: Uint8Array; nonce: string }> {
  const body = await readJsonBody(req);
  const text = goField(body, struct, 'key', 'string', '');
  const nonce = goField(body, struct, 'nonce', 'string', '');
  if (text === '') throw new SecretsError(400, "'key' must be specified in request body as JSON");
  const key = decodeKey(text);
  if (!key) throw new SecretsError(400, "'key' must be a valid hex or base64 string");
  return { key, nonce };
}

/**
 * The nonce of a cancel, if the caller sent one (`?nonce=` or a JSON body's `nonce`). The spec's
 * cancel has no request body; the newest real core checks a nonce it is given (`RekeyCancel`).
 * UNCONFIRMED: how the newest real HTTP handler reads it.
 */
async function cancelNonceOf(req: SandboxRequest): Promise<string | undefined> {
  const body = await readJsonBody(req);
  const fromBody = goField<string | undefined>(body, 'RekeyCancelRequest', 'nonce', 'string', undefined);
  if (fromBody !== undefined && fromBody !== '') return fromBody;
  const fromQuery = req.query.get('nonce');
  return fromQuery === null || fromQuery === '' ? undefined : fromQuery;
}
