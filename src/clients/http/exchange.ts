/**
 * One attempt of a request: sent through the dispatcher's own handler interface, its whole answer
 * read into memory up to a cap, all within a time limit, and cut short by the caller's signal.
 *
 * Why not undici's `request`: it wraps every answer in a Readable stream (read back here with an
 * async iterator) and needs an AbortController per attempt to apply the time limit; for the small
 * JSON answers the services give, that machinery was a fifth of Converge's CPU per request. The
 * handler collects the chunks as they arrive and aborts through the dispatch controller instead.
 */
import type { Dispatcher } from 'undici';

/** The abort this module caused itself when the attempt ran out of time. */
export class AttemptTimeout extends Error {}

/** An answer longer than the cap, announced (Content-Length) or counted: reading stopped there. */
export class ResponseTooLarge extends Error {
  constructor(
    readonly status: number,
    readonly announcedBytes: number | undefined,
  ) {
    super('response too large');
  }
}

export interface Exchange {
  origin: string;
  path: string;
  method: string;
  headers: Record<string, string>;
  body: string | Uint8Array | undefined;
}

export interface ExchangeLimits {
  /** The whole attempt, from sending to the last byte of the answer. */
  timeoutMs: number;
  maxResponseBytes: number;
  /** Aborts the attempt with the signal's reason. */
  signal?: AbortSignal | undefined;
}

export interface ExchangeResult {
  status: number;
  /** As undici parses them: lower-case names, repeated headers as arrays. */
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/**
 * Rejects with `AttemptTimeout` when time runs out, `ResponseTooLarge` past the cap (the connection
 * is closed, so the rest is never read), the signal's reason when it aborts, or undici's error.
 */
export function exchange(
  dispatcher: Dispatcher,
  request: Exchange,
  limits: ExchangeLimits,
): Promise<ExchangeResult> {
  const { signal, maxResponseBytes } = limits;
  if (signal?.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<ExchangeResult>((resolve, reject) => {
    let controller: Dispatcher.DispatchController | undefined;
    /** Why the attempt was cut short before undici handed over its controller. */
    let pendingAbort: Error | undefined;
    let settled = false;
    let status = 0;
    let headers: ExchangeResult['headers'] = {};
    const chunks: Buffer[] = [];
    let size = 0;

    const settle = () => {
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onSignal);
    };
    const abort = (reason: Error) => {
      if (settled) return;
      if (controller) {
        controller.abort(reason);
        return;
      }
      // Still queued for a connection: undici aborts it when it would start; the caller need not
      // wait for a free connection to hear that the attempt is over.
      pendingAbort = reason;
      settle();
      reject(reason);
    };
    const onSignal = () => abort(signal!.reason as Error);
    const timer = setTimeout(() => abort(new AttemptTimeout()), limits.timeoutMs);
    signal?.addEventListener('abort', onSignal, { once: true });

    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(ctrl) {
        controller = ctrl;
        if (pendingAbort) ctrl.abort(pendingAbort);
      },
      onResponseStart(ctrl, statusCode, responseHeaders) {
        status = statusCode;
        headers = responseHeaders as ExchangeResult['headers'];
        const announced = Number(responseHeaders['content-length']);
        if (Number.isFinite(announced) && announced > maxResponseBytes)
          ctrl.abort(new ResponseTooLarge(statusCode, announced));
      },
      onResponseData(ctrl, chunk) {
        size += chunk.length;
        if (size > maxResponseBytes) {
          ctrl.abort(new ResponseTooLarge(status, undefined));
          return;
        }
        chunks.push(chunk);
      },
      onResponseEnd() {
        if (settled) return;
        settle();
        resolve({ status, headers, text: Buffer.concat(chunks, size).toString('utf8') });
      },
      onResponseError(_ctrl, err) {
        if (settled) return;
        settle();
        reject(err);
      },
    };
    try {
      dispatcher.dispatch(
        {
          origin: request.origin,
          path: request.path,
          method: request.method as Dispatcher.HttpMethod,
          headers: request.headers,
          body: request.body ?? null,
          // Backstops only: the timer above bounds the whole attempt.
          headersTimeout: limits.timeoutMs + 1_000,
          bodyTimeout: limits.timeoutMs + 1_000,
        },
        handler,
      );
    } catch (err) {
      settle();
      reject(err as Error);
    }
  });
}
