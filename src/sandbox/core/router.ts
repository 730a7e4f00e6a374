/**
 * A tiny path router. Patterns are `/`-separated segments: literals, `:name` (one non-empty segment)
 * and a final `*name` (the rest of the path, possibly empty, slashes included). The first pattern that
 * matches the path owns it, as in Go's ServeMux-style registration the real services use: a path owned
 * by a pattern that lacks the request's method answers 405 rather than falling through.
 */
import type { SandboxRequest, SandboxResponse } from './http.js';

export type Handler = (req: SandboxRequest) => Promise<SandboxResponse> | SandboxResponse;
export type MethodHandlers = Partial<Record<string, Handler>>;

interface Route {
  segments: string[];
  /** Whether the last segment is a `*name` taking the rest of the path (found once, when added). */
  star: boolean;
  handlers: MethodHandlers;
}

export type RouteMatch =
  | { kind: 'found'; handler: Handler; params: Record<string, string> }
  | { kind: 'method-not-allowed'; allowed: string[] }
  | { kind: 'not-found' };

export class Router {
  private readonly routes: Route[] = [];

  /** Registers a pattern; earlier registrations win, so add specific patterns before catch-alls. */
  add(pattern: string, handlers: MethodHandlers): void {
    if (!pattern.startsWith('/')) throw new Error(`route pattern must start with '/': ${pattern}`);
    const segments = pattern.split('/').slice(1);
    const star = segments.findIndex((s) => s.startsWith('*'));
    if (star !== -1 && star !== segments.length - 1) {
      throw new Error(`'*' parameter must be the last segment: ${pattern}`);
    }
    this.routes.push({ segments, star: star !== -1, handlers });
  }

  match(method: string, path: string): RouteMatch {
    const parts = path.split('/').slice(1);
    for (const route of this.routes) {
      const params = matchSegments(route, parts);
      if (!params) continue;
      const handler = route.handlers[method];
      if (handler) return { kind: 'found', handler, params };
      return { kind: 'method-not-allowed', allowed: Object.keys(route.handlers) };
    }
    return { kind: 'not-found' };
  }
}

function matchSegments(route: Route, parts: string[]): Record<string, string> | undefined {
  // Every route is tried in turn for every request: rule a route out on its shape and literals
  // before making anything (most fail there), then collect its parameters.
  const { segments: pattern, star } = route;
  const last = pattern.length - 1;
  // `/role/*id` needs the slash: it matches `/role/` (empty id) but not `/role`.
  if (star ? parts.length <= last : parts.length !== pattern.length) return undefined;
  const fixed = star ? last : pattern.length;
  for (let i = 0; i < fixed; i++) {
    const seg = pattern[i]!;
    const part = parts[i]!;
    if (seg.startsWith(':') ? part === '' : seg !== part) return undefined;
  }
  const params: Record<string, string> = {};
  for (let i = 0; i < fixed; i++) {
    const seg = pattern[i]!;
    if (seg.startsWith(':')) params[seg.slice(1)] = decode(parts[i]!);
  }
  if (star) params[pattern[last]!.slice(1)] = decode(parts.slice(last).join('/'));
  return params;
}

function decode(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    // A malformed escape stays as sent; the handler then simply finds nothing under that name.
    return raw;
  }
}
