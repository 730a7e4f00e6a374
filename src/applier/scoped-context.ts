/**
 * A change's own context: the run's, with every service client it hands out carrying the change's
 * request scope (its object's address for retry lines; the create whose sends a request counts
 * for). Passed, not held in an async context: on Node 20 an AsyncLocalStorage in use switches on
 * promise hooks for the whole process, and an apply spent a third of its CPU in them.
 */
import type { RequestScope } from '../clients/http/create-sends.js';
import type { ServiceClient, ServiceDefinition } from '../clients/service.js';
import { type KindContext, RUN_CONTEXT, runContextOf } from '../resources/contract.js';

const SCOPE = Symbol('request scope');

type Scoped = KindContext & { readonly [SCOPE]?: RequestScope };

/** `ctx` with `scope` on every client it hands out (added to the scope `ctx` already has). */
export function scopedContext(ctx: KindContext, scope: RequestScope): KindContext {
  const merged: RequestScope = { ...requestScopeOf(ctx), ...scope };
  const client = <C extends ServiceClient>(service: ServiceDefinition<C>, connection?: string): C => {
    const c = ctx.client(service, connection);
    return c.withScope ? c.withScope(merged) : c;
  };
  return Object.create(ctx, {
    client: { value: client },
    [SCOPE]: { value: merged },
    [RUN_CONTEXT]: { value: runContextOf(ctx) },
  }) as KindContext;
}

/** The scope `ctx` gives its clients' requests, if it is a change's (for a request made directly). */
export function requestScopeOf(ctx: KindContext): RequestScope | undefined {
  return (ctx as Scoped)[SCOPE];
}
