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
    this.routes.push({ segments, handlers });
  }

  match(method: string, path: string): RouteMatch {
    const parts = path.split('/').slice(1);
    for (const route of this.routes) {
      const params = matchSegments(route.segments, parts);
      if (!params) continue;
      const handler = route.handlers[method];
      if (handler) return { kind: 'found', handler, params };
      return { kind: 'method-not-allowed', allowed: Object.keys(route.handlers) };
    }
    return { kind: 'not-found' };
  }
}

function matchSegments(pattern: string[], parts: string[]): Record<string, string> | undefined {
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const seg = pattern[i]!;
    if (seg.startsWith('*')) {
      // `/role/*id` needs the slash: it matches `/role/` (empty id) but not `/role`.
      if (parts.length <= i) return undefined;
      params[seg.slice(1)] = decode(parts.slice(i).join('/'));
      return params;
    }
    const part = parts[i];
    if (part === undefined) return undefined;
    if (seg.startsWith(':')) {
      if (part === '') return undefined;
      params[seg.slice(1)] = decode(part);
    } else if (seg !== part) {
      return undefined;
    }
  }
  return parts.length === pattern.length ? params : undefined;
}

function decode(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    // A malformed escape stays as sent; the handler then simply finds nothing under that name.
    return raw;
  }
}
