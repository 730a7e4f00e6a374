/** Small builders for the scheduler tests: a job body and a register call that fails the test on errors. */
import type { Api, CallOptions } from './helpers.js';

export type Json = Record<string, unknown>;

export interface RegisterReply {
  EvalID: string;
  EvalCreateIndex: number;
  JobModifyIndex: number;
  Index: number;
  Warnings: string;
}

/** A service job with one group per entry of `groups` (name → count), one docker task each. */
export function jobSpec(id: string, groups: Record<string, number> = { web: 1 }, extra: Json = {}): Json {
  return {
    ID: id,
    TaskGroups: Object.entries(groups).map(([Name, Count]) => ({
      Name,
      Count,
      Tasks: [{ Name: 'app', Driver: 'docker', Config: { image: 'nginx:1.27' } }],
    })),
    ...extra,
  };
}

export async function register(
  api: Api,
  job: Json,
  body: Json = {},
  opts: CallOptions = {},
): Promise<RegisterReply> {
  const res = await api('PUT', '/v1/jobs', { ...opts, body: { Job: job, ...body } });
  if (res.status !== 200) throw new Error(`register failed: ${res.status} ${res.text}`);
  return res.json<RegisterReply>();
}

export async function getJson<T = Json>(api: Api, path: string, opts: CallOptions = {}): Promise<T> {
  const res = await api('GET', path, opts);
  if (res.status !== 200) throw new Error(`GET ${path} failed: ${res.status} ${res.text}`);
  return res.json<T>();
}
