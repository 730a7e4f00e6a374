/**
 * The routes under `/v1/auth/` (directory auth mounts) and `/v1/sys/`. Mounts are resolved at request
 * time, longest path first, so every `/auth/<mount>/...` path moves with its mount, nested mount paths
 * included. Inside a mount the paths are the LDAP method's (`builtin/credential/ldap/path_*.go`):
 *
 * | path              | operations                 |
 * | ----------------- | -------------------------- |
 * | `config`          | read, update               |
 * | `groups/`         | list                       |
 * | `groups/<name>`   | read, update, delete       |
 * | `users/`          | list                       |
 * | `users/<name>`    | read, update, delete       |
 * | `login/<user>`    | update (no token needed)   |
 *
 * Order of checks, as the real service: the HTTP method (405 `{"errors":[]}`), `?list` (400), then the
 * token and its right (403 `permission denied`; login paths need none), then the route: no mount is 404
 * `no handler for route ...`, no path inside the mount is 404 `unsupported path`, a path without the
 * operation is 405 `unsupported operation`.
 */
import type { SandboxRequest, SandboxResponse } from '../../core/http.js';
import type { Router } from '../../core/router.js';
import { answeringErrors } from '../shared/answer-errors.js';
import type { SecretsAccess } from './access.js';
import { localNameKey } from './local-names.js';
import { handleLogin } from './login.js';
import type { MountState } from './model.js';
import { applyConfigWrite, compareGo, configReadData, groupFromBody, userFromBody } from './normalize.js';
import { type Operation, operationOf, readJsonBody } from './request.js';
import type { SecretsStore } from './store.js';
import {
  envelope,
  errorResponse,
  fromError,
  listResponse,
  noContent,
  noHandler,
  SecretsError,
  UNSUPPORTED_OPERATION,
  UNSUPPORTED_PATH,
  writeResponse,
} from './vault.js';

export interface SecretsDeps {
  store: SecretsStore;
  access: SecretsAccess;
}

/** The HTTP methods the real service turns into operations; others are 405 before anything else. */
export const SECRETS_METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'LIST', 'PATCH'] as const;

type Handler = (req: SandboxRequest) => Promise<SandboxResponse>;

/** Same handler for every method; `SecretsError`s become the real error bodies. */
function allMethods(handler: Handler): Record<string, Handler> {
  const wrapped = answeringErrors(SecretsError, fromError)(handler);
  return Object.fromEntries(SECRETS_METHODS.map((m) => [m, wrapped]));
}

export function registerAuthRoutes(router: Router, deps: SecretsDeps): void {
  router.add(
    '/v1/auth/*rest',
    allMethods((req) => handleAuth(req, deps)),
  );
}

/**
 * The catch-all of `/v1/sys/`: the rekey endpoints (another issue) register their own routes before it.
 * The real `sys/` mount always exists, so an unknown path in it is `unsupported path`; only the root
 * token gets that far, since no config token holds rights there yet.
 */
export function registerSysFallback(router: Router, deps: SecretsDeps): void {
  router.add(
    '/v1/sys/*rest',
    allMethods(async (req) => {
      operationOf(req);
      deps.access.requireRoot(req);
      throw new SecretsError(404, UNSUPPORTED_PATH);
    }),
  );
}

const unsupportedOperation = () => new SecretsError(405, UNSUPPORTED_OPERATION);

async function handleAuth(req: SandboxRequest, deps: SecretsDeps): Promise<SandboxResponse> {
  const { store, access } = deps;
  const op = operationOf(req);
  let path = req.params.rest ?? '';
  // A list is always of a "folder" (`http/logical.go` adds the slash).
  if (op === 'list' && !path.endsWith('/')) path += '/';
  const resolved = store.resolve(path);

  // `login/*` is the method's unauthenticated path: no token needed, none checked.
  const login = resolved && /^login\/(.+)$/s.exec(resolved.rest);
  if (resolved && login) {
    if (op !== 'update') throw unsupportedOperation();
    return handleLogin(req, resolved.mount, login[1]!, access);
  }

  access.require(req, op === 'read' || op === 'list' ? 'read' : 'write');
  if (!resolved) throw noHandler(`auth/${path}`);
  const { mount, rest } = resolved;

  if (rest === 'config') return handleConfig(req, op, mount, store);
  const collection = /^(groups|users)\/?$/.exec(rest);
  if (collection) {
    if (op !== 'list') throw unsupportedOperation();
    const names = collection[1] === 'groups' ? mount.groups.keys() : mount.users.keys();
    return listResponse([...names].sort(compareGo));
  }
  const item = /^(groups|users)\/(.+)$/s.exec(rest);
  if (item) {
    return item[1] === 'groups'
      ? handleGroup(req, op, mount, item[2]!, store)
      : handleUser(req, op, mount, item[2]!, store);
  }
  throw new SecretsError(404, UNSUPPORTED_PATH);
}

async function handleConfig(
  req: SandboxRequest,
  op: Operation,
  mount: MountState,
  store: SecretsStore,
): Promise<SandboxResponse> {
  switch (op) {
    case 'read':
      return envelope({ data: configReadData(store.configOf(mount)) });
    case 'update': {
      const { config, warnings } = applyConfigWrite(mount.config, await readJsonBody(req));
      store.setConfig(mount, config);
      return writeResponse(warnings);
    }
    default:
      throw unsupportedOperation();
  }
}

/**
 * Group names are folded by `localNameKey` for reads and writes. The delete is NOT folded: the real
 * `pathGroupDelete` (`builtin/credential/ldap/path_groups.go`) deletes `group/<name as given>`, so
 * deleting `Admins` leaves a stored `admins` in place (and still answers 204). The sandbox keeps that
 * on purpose (issue 16): a client that trusts a case-insensitive group delete is wrong against the
 * real service too, and the sandbox should show it. Users differ: see `handleUser`.
 */
async function handleGroup(
  req: SandboxRequest,
  op: Operation,
  mount: MountState,
  name: string,
  store: SecretsStore,
): Promise<SandboxResponse> {
  const key = localNameKey(store.configOf(mount), name);
  switch (op) {
    case 'read': {
      const group = mount.groups.get(key);
      return group ? envelope({ data: { policies: [...group.policies] } }) : errorResponse(404, []);
    }
    case 'update': {
      const { group, warnings } = groupFromBody(await readJsonBody(req));
      store.putGroup(mount, key, group);
      return writeResponse(warnings);
    }
    case 'delete':
      // As given, not `key`: the real service's quirk, kept (see above).
      store.deleteGroup(mount, name);
      return noContent();
    default:
      throw unsupportedOperation();
  }
}

/**
 * Users as groups, but every operation folds the name, delete included. The spec lower-cases names in
 * local definitions "for matching" when `case_sensitive_names` is false, and a user delete that
 * answered 204 for `MARYJANE` while `maryjane` kept her policies would be a silent no-op on a
 * security operation (issue 16). The real `pathUserDelete` (`path_users.go`) deletes the name as
 * given; here the spec's rule wins. `groups` reads back as one comma-separated string, `policies` as
 * a list.
 */
async function handleUser(
  req: SandboxRequest,
  op: Operation,
  mount: MountState,
  name: string,
  store: SecretsStore,
): Promise<SandboxResponse> {
  const config = store.configOf(mount);
  const key = localNameKey(config, name);
  switch (op) {
    case 'read': {
      const user = mount.users.get(key);
      return user
        ? envelope({ data: { groups: user.groups.join(','), policies: [...user.policies] } })
        : errorResponse(404, []);
    }
    case 'update': {
      const { user, warnings } = userFromBody(await readJsonBody(req), config.case_sensitive_names);
      store.putUser(mount, key, user);
      return writeResponse(warnings);
    }
    case 'delete':
      store.deleteUser(mount, key);
      return noContent();
    default:
      throw unsupportedOperation();
  }
}
