/**
 * Who may take each step of the recovery-key rekey: the key holders with their shares, or an
 * administrator with the root token.
 *
 * - The spec, Authentication 3: "Rekey submissions are authorized by recovery key shares plus the
 *   operation nonce." A submission (`PUT update`, `PUT verify`) needs no token: key holders often have
 *   none. A token sent with one is ignored, neither required nor checked: the real handlers
 *   (`http/sys_rekey.go` `handleSysRekeyUpdate`/`handleSysRekeyVerify`) never look at it, so a holder
 *   whose shell happens to export a token of another service or an expired one is not refused.
 * - The status reads (`GET init`, `GET verify`): the spec is silent; the real service serves them
 *   unauthenticated (the same raw handlers, mounted in `http/handler.go` without a token check), and a
 *   holder needs them for the nonce a submission carries. No token.
 * - Start (`PUT init`), cancel (`DELETE init`) and cancel verification (`DELETE verify`): these are
 *   not submissions but the spec's administrative requests (Authentication 1: they "carry header
 *   X-Secrets-Token"); they set the new key's shape or throw away progress other holders made. The
 *   real handlers take them unauthenticated too (`handleSysRekeyInit` switches on the method only).
 *   The sandbox follows the spec's stricter reading and asks for the root token, as for its other
 *   `sys/` paths: an anonymous cancel interrupting a valid rekey is the very risk for which OpenBao, the
 *   Vault fork, deprecated the unauthenticated rekey endpoints (`disable_unauthed_rekey_endpoints`).
 * - The backup (`sys/rekey/recovery-key-backup`): a `sys/` backend path in the real service, behind a
 *   token with sudo (`vault/logical_system.go`). Root token.
 */
import type { SandboxRequest } from '../../../core/http.js';
import type { SecretsAccess } from '../access.js';

export type RekeyStep =
  | 'status'
  | 'start'
  | 'cancel'
  | 'submit'
  | 'verification-status'
  | 'verify'
  | 'cancel-verification'
  | 'backup';

/** The steps a key holder takes with shares and a nonce alone. */
export const TOKEN_FREE_REKEY_STEPS: ReadonlySet<RekeyStep> = new Set<RekeyStep>([
  'status',
  'submit',
  'verification-status',
  'verify',
]);

/** Throws 403 `permission denied` when the step needs the root token and the request lacks it. */
export function authorizeRekeyStep(access: SecretsAccess, req: SandboxRequest, step: RekeyStep): void {
  if (!TOKEN_FREE_REKEY_STEPS.has(step)) access.requireRoot(req);
}
