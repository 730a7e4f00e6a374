/**
 * An undici interceptor that makes the HTTP layer hand back a successful body as raw text.
 *
 * Why: `HttpClient` parses every JSON body, but a downloaded state file must come back byte for byte
 * (its MD5 is checked against the state version's), and re-serialising parsed JSON changes spacing and
 * key order. The hosted download answers `application/json`, so for 2xx answers the content type is
 * relabelled as opaque bytes before the HTTP layer sees it; error answers keep theirs so their
 * messages are still read. Only the download client uses this.
 */
import type { Dispatcher } from 'undici';

export const RAW_CONTENT_TYPE = 'application/octet-stream';

export const textBodies: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (options, handler) =>
  dispatch(options, {
    onRequestStart: (controller, context) => handler.onRequestStart?.(controller, context),
    onRequestUpgrade: (controller, status, headers, socket) =>
      handler.onRequestUpgrade?.(controller, status, headers, socket),
    onResponseStart: (controller, status, headers, message) =>
      handler.onResponseStart?.(
        controller,
        status,
        status >= 200 && status < 300 ? { ...headers, 'content-type': RAW_CONTENT_TYPE } : headers,
        message,
      ),
    onResponseData: (controller, chunk) => handler.onResponseData?.(controller, chunk),
    onResponseEnd: (controller, trailers) => handler.onResponseEnd?.(controller, trailers),
    onResponseError: (controller, error) => handler.onResponseError?.(controller, error),
  });
