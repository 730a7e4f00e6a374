/** Talking to a sandbox over real HTTP on loopback, as a client would. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningSandbox } from '../../src/sandbox/index.js';

export interface ApiResponse {
  status: number;
  text: string;
  headers: Headers;
  json<T = unknown>(): T;
}

export interface CallOptions {
  /** Sent as `Authorization: Bearer`; `null` sends no token at all. */
  token?: string | null;
  body?: unknown;
  /** Sent as is (for malformed JSON). */
  rawBody?: string;
  headers?: Record<string, string>;
}

export type Api = (method: string, path: string, opts?: CallOptions) => Promise<ApiResponse>;

export function apiFor(sandbox: RunningSandbox): Api {
  return async (method, path, opts = {}) => {
    const headers: Record<string, string> = { ...opts.headers };
    const token = opts.token === undefined ? sandbox.rootToken : opts.token;
    if (token !== null) headers.Authorization = `Bearer ${token}`;
    let body: string | undefined;
    if (opts.rawBody !== undefined) body = opts.rawBody;
    else if (opts.body !== undefined) body = JSON.stringify(opts.body);
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(`${sandbox.url}${path}`, { method, headers, body });
    const text = await res.text();
    return { status: res.status, text, headers: res.headers, json: <T>() => JSON.parse(text) as T };
  };
}

export interface RoleJson {
  ID: string;
  Name: string;
  Description: string;
  Policies?: { ID: string; Name: string }[];
  ServiceIdentities?: { ServiceName: string; Datacenters?: string[] }[];
  NodeIdentities?: { NodeName: string; Datacenter: string }[];
  Hash: string;
  CreateIndex: number;
  ModifyIndex: number;
  Namespace: string;
}

/** Creates a role with the root token and returns it; fails the test on anything but 200. */
export async function createRole(
  api: Api,
  body: Record<string, unknown>,
  opts: CallOptions = {},
): Promise<RoleJson> {
  const res = await api('PUT', '/v1/acl/role', { ...opts, body });
  if (res.status !== 200) throw new Error(`create role failed: ${res.status} ${res.text}`);
  return res.json<RoleJson>();
}

export function tempDir(prefix: string): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), `converge-${prefix}-`));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
