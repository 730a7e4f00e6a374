/**
 * Each service throws its own error class from deep inside a handler (a bad body, a missing record)
 * and answers it in its own wire format at the route. This is that one try/catch, shared: errors of
 * the service's class become its response, anything else propagates to the core (a 500).
 */
import type { SandboxRequest, SandboxResponse } from '../../core/http.js';
import type { Handler } from '../../core/router.js';

/** Returns a wrapper that turns a thrown `errorClass` into `toResponse(err)` for one handler. */
export function answeringErrors<E extends Error>(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any constructor signature
  errorClass: new (...args: any[]) => E,
  toResponse: (err: E) => SandboxResponse,
): (fn: Handler) => (req: SandboxRequest) => Promise<SandboxResponse> {
  return (fn) => async (req) => {
    try {
      return await fn(req);
    } catch (err) {
      if (err instanceof errorClass) return toResponse(err);
      throw err;
    }
  };
}
