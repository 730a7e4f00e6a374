/** The shared HTTP layer: one `HttpClient` per service connection, typed errors, env endpoints. */
export { defaultParseError, isJsonContentType, type QueryValue } from './body.js';
export { errorDetails, formatErrorDetails, parseErrorDocument } from './error-details.js';
export {
  bearerAuth,
  DEFAULT_MAX_RESPONSE_BYTES,
  HttpClient,
  type HttpClientOptions,
  type HttpRequest,
  type HttpResponse,
  type JsonResponse,
  type RequestEvent,
  type RateLimitPauseEvent,
  type RetryEvent,
} from './client.js';
export { connectionFromEnv, EndpointConfigError, normaliseAddress, settingsFromEnv } from './endpoint.js';
export {
  ConnectionError,
  HttpStatusError,
  isServiceError,
  ServiceError,
  type ServiceErrorKind,
  TimeoutError,
  UnexpectedResponseError,
  WaitTimeoutError,
  type HttpSettingNames,
} from './errors.js';
export { AdaptiveRateLimiter, type RateLimitPause } from './rate-limiter.js';
export { HostRegistry } from './host-registry.js';
export { RetryBudget } from './retry-budget.js';
export { redactPath } from './redact.js';
export { checkShape, lazySchema, nullable, type SchemaSource, type ShapeContext } from './shape.js';
export { MAX_MESSAGE_LENGTH, REDACTED, scrubAndTruncate, scrubSecrets } from '../../common/scrub.js';
export { DEFAULT_RETRY, type RetryOptions } from './retry-policy.js';
