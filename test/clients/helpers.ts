/** Shared set-up for the client tests: a MockAgent-backed HttpClient with fast retries. */
import { inspect } from 'node:util';
import { MockAgent } from 'undici';
import { HttpClient, type HttpClientOptions } from '../../src/clients/http/index.js';

export const ORIGIN = 'http://registry.test:8500';
export const TOKEN = 'sekret-token-4f1c9a';

export function mockAgent(): MockAgent {
  const agent = new MockAgent();
  agent.disableNetConnect();
  return agent;
}

/** Retries back off by at most a few milliseconds so the tests stay quick. */
export function mockedClient(agent: MockAgent, overrides: Partial<HttpClientOptions> = {}): HttpClient {
  return new HttpClient({
    service: 'registry',
    baseUrl: ORIGIN,
    token: TOKEN,
    dispatcher: agent,
    ...overrides,
    retry: { minDelayMs: 1, maxDelayMs: 5, ...overrides.retry },
  });
}

export const jsonHeaders = { 'content-type': 'application/json' };

/** Every way an error can be shown or serialised, joined, so a test can assert a secret is in none. */
export function everyRendering(err: unknown): string {
  const e = err as Error;
  return [
    inspect(err, { depth: 10, showHidden: true }),
    JSON.stringify(err),
    String(e.stack),
    String(e),
    e.message,
    JSON.stringify(
      Object.getOwnPropertyNames(e).map((k) => [k, inspect((e as unknown as Record<string, unknown>)[k])]),
    ),
  ].join('\n');
}

export async function caught(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected the promise to reject');
}
