/**
 * node:crypto, loaded on first use rather than with the module that imports this. Loading it costs
 * about 3 ms; the kinds that hash (a service object's content version, a state file's MD5) are all
 * loaded by every command, but only plan, apply and the state commands hash (issue 20: start-up of
 * `converge validate`). `process.getBuiltinModule` loads it synchronously (Node 20.16 and later).
 */
export function nodeCrypto(): typeof import('node:crypto') {
  return process.getBuiltinModule('node:crypto');
}
