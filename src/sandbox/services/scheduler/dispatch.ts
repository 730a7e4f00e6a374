/**
 * Children of template jobs: dispatched instances of a parameterized job (the real `Job.Dispatch` and
 * `validateDispatchRequest`, `nomad/job_endpoint.go`) and forced launches of a periodic job (the real
 * `PeriodicDispatch.createEval`/`deriveJob`, `nomad/periodic.go`). Their error texts are the real ones;
 * the real agent answers them all as 500 (uncoded errors).
 */
import { randomUUID } from 'node:crypto';
import { type Json, SchedulerError } from './model.js';

/** The real `DispatchPayloadSizeLimit`: 16 KiB of decoded payload. */
export const DISPATCH_PAYLOAD_LIMIT = 16 * 1024;

export interface DispatchRequest {
  /** The payload's bytes (decoded from the body's base64). */
  payload: Buffer;
  /** The payload as sent (base64), stored on the child. */
  payloadBase64: string;
  meta: Record<string, string>;
  priority: number | undefined;
}

/** The parent must exist, be parameterized and not stopped; then the request must fit its rules. */
export function checkDispatch(parent: Json | undefined, id: string, req: DispatchRequest): void {
  if (!parent) throw new SchedulerError(500, 'parameterized job not found');
  const params = parent.ParameterizedJob as Json | null | undefined;
  if (params === null || params === undefined || parent.Dispatched === true)
    throw new SchedulerError(500, `Specified job "${id}" is not a parameterized job`);
  if (parent.Stop === true) throw new SchedulerError(500, `Specified job "${id}" is stopped`);

  // The real canonical default of `Payload` is "optional".
  const rule = (params.Payload as string | undefined) || 'optional';
  const has = req.payload.length !== 0;
  if (rule === 'required' && !has)
    throw new SchedulerError(500, 'Payload is not provided but required by parameterized job');
  if (rule === 'forbidden' && has)
    throw new SchedulerError(500, 'Payload provided but forbidden by parameterized job');
  if (req.payload.length > DISPATCH_PAYLOAD_LIMIT)
    throw new SchedulerError(
      500,
      `Payload exceeds maximum size; ${req.payload.length} > ${DISPATCH_PAYLOAD_LIMIT}`,
    );

  const required = (params.MetaRequired as string[] | null | undefined) ?? [];
  const optional = (params.MetaOptional as string[] | null | undefined) ?? [];
  // Go prints the key lists with `%v` (`[a b]`) in map order; sorted here, so the text is stable.
  const unpermitted = Object.keys(req.meta)
    .filter((k) => !required.includes(k) && !optional.includes(k))
    .sort();
  if (unpermitted.length > 0)
    throw new SchedulerError(
      500,
      `Dispatch request included unpermitted metadata keys: [${unpermitted.join(' ')}]`,
    );
  const missing = required.filter((k) => !(k in req.meta)).sort();
  if (missing.length > 0)
    throw new SchedulerError(500, `Dispatch did not provide required meta keys: [${missing.join(' ')}]`);
  const priority = req.priority ?? (parent.Priority as number);
  if (priority < 1 || priority > 100)
    throw new SchedulerError(500, 'dispatch job priority must be between [1, 100]');
}

/**
 * The dispatched child: a copy of the parent with ID `<parent>/dispatch-<unix>-<8 hex>`, the parent's
 * meta overlaid with the request's, `Dispatched: true` and the payload. As in the real product it keeps
 * the parent's `ParameterizedJob` block (`Dispatched` is what makes it a normal job). The real server
 * stores the payload snappy-compressed; here it is kept as sent.
 */
export function dispatchedChild(parent: Json, req: DispatchRequest, now: Date = new Date()): Json {
  const child = stripServerFields(structuredClone(parent));
  const id = `${String(parent.ID)}/dispatch-${Math.floor(now.getTime() / 1000)}-${randomUUID().slice(0, 8)}`;
  return {
    ...child,
    ID: id,
    Name: id,
    ParentID: parent.ID,
    Dispatched: true,
    Priority: req.priority ?? parent.Priority,
    Meta: { ...((parent.Meta as Json | null) ?? {}), ...req.meta },
    Payload: req.payloadBase64 === '' ? null : req.payloadBase64,
  };
}

/**
 * A forced launch of a periodic job: ID `<parent>/periodic-<unix>`, without the `Periodic` block.
 * Two launches in the same second would share that ID, and the second would only update the first
 * (the real dispatcher derives the ID the same way); the spec makes each force a new instance, so
 * a taken ID moves on to the next free second, keeping the ID's form (clients read a launch time
 * from it). `taken` says whether a job of that ID exists in the parent's namespace.
 */
export function periodicChild(parent: Json, taken: (id: string) => boolean, now: Date = new Date()): Json {
  const child = stripServerFields(structuredClone(parent));
  let launch = Math.floor(now.getTime() / 1000);
  while (taken(`${String(parent.ID)}/periodic-${launch}`)) launch += 1;
  const id = `${String(parent.ID)}/periodic-${launch}`;
  return { ...child, ID: id, Name: id, ParentID: parent.ID, Periodic: null };
}

function stripServerFields(job: Json): Json {
  for (const f of ['Status', 'StatusDescription', 'Stable', 'Version', 'SubmitTime']) delete job[f];
  for (const f of ['CreateIndex', 'ModifyIndex', 'JobModifyIndex']) delete job[f];
  return job;
}
