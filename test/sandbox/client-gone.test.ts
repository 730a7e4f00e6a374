/**
 * A client that hangs up before its answer ends the sandbox's work on it: a blocking query stops
 * waiting at once instead of holding its timer and feed listener until `wait` runs out.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';

let sandbox: RunningSandbox;
const lines: string[] = [];

beforeAll(async () => {
  sandbox = await startSandbox({ log: (line) => lines.push(line) });
});

afterAll(async () => {
  await sandbox.close();
});

/** Resolves once a log line matches, or fails after `deadlineMs`. */
async function logged(pattern: RegExp, deadlineMs: number): Promise<string> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const line = lines.find((l) => pattern.test(l));
    if (line) return line;
    if (Date.now() > until)
      throw new Error(`no log line ${pattern} within ${deadlineMs} ms: ${lines.join(' | ')}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

it('ends a blocking query whose client hung up, long before its wait is over', async () => {
  const headers = { Authorization: `Bearer ${sandbox.rootToken}` };
  const first = await fetch(`${sandbox.url}/v1/acl/roles`, { headers });
  await first.text();
  const index = first.headers.get('x-registry-index');
  const hangUp = new AbortController();
  const waiting = fetch(`${sandbox.url}/v1/acl/roles?index=${index}&wait=60s`, {
    headers,
    signal: hangUp.signal,
  }).catch((error: Error) => error.name);
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(lines.some((l) => l.includes('wait=60s'))).toBe(false);
  hangUp.abort();
  expect(await waiting).toBe('AbortError');
  // The sandbox logs a request when its handler is done: here, once the hang-up ended the wait.
  await logged(/^GET \/v1\/acl\/roles\?index=\d+&wait=60s /, 10_000);
  // A normal answer after it is unaffected.
  const after = await fetch(`${sandbox.url}/v1/acl/roles`, { headers });
  expect(after.status).toBe(200);
});

it('cuts added latency short when the client hangs up or the sandbox closes', async () => {
  const seen: string[] = [];
  const slow = await startSandbox({ config: { faults: { latencyMs: 60_000 } }, log: (l) => seen.push(l) });
  const headers = { Authorization: `Bearer ${slow.rootToken}` };
  try {
    const hangUp = new AbortController();
    const gone = fetch(`${slow.url}/v1/acl/roles?who=gone`, { headers, signal: hangUp.signal }).catch(
      (error: Error) => error.name,
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    hangUp.abort();
    expect(await gone).toBe('AbortError');
    const until = Date.now() + 5_000;
    while (!seen.some((l) => l.includes('who=gone')) && Date.now() < until)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(seen.find((l) => l.includes('who=gone'))).toMatch(/^GET \/v1\/acl\/roles\?who=gone /);

    const waiting = fetch(`${slow.url}/v1/acl/roles?who=waiting`, { headers }).then(
      (r) => r.status,
      (error: Error) => error.name,
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    const closing = performance.now();
    await slow.close();
    // Well inside the 2 s grace after which closing drops every connection.
    expect(performance.now() - closing).toBeLessThan(1_000);
    // Whatever the answer (the closing sandbox may still send it), it does not wait out the minute.
    expect(await waiting).toBeDefined();
  } finally {
    await slow.close();
  }
});
