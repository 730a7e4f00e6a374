// The round trip a request really has against the bench's sandbox: one small read at a time, on a
// kept-alive connection, with the bare HTTP client (undici's request), no Converge code in it. The
// latency bound assumes the added latency alone; this says how much the loopback HTTP exchange and
// the sandbox's own work add to it on this machine, so a reader can tell the two apart.
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';

/** Median milliseconds of `runs` sequential GETs of `url` (after a few to open and warm the connection). */
export async function measureRoundTrip(url, headers, runs = 50) {
  const agent = new Agent({ connections: 1 });
  try {
    const once = async () => {
      const started = performance.now();
      const res = await request(url, { headers, dispatcher: agent });
      await res.body.text();
      if (res.statusCode !== 200) throw new Error(`round trip: GET ${url} answered ${res.statusCode}`);
      return performance.now() - started;
    };
    for (let i = 0; i < 5; i += 1) await once();
    const times = [];
    for (let i = 0; i < runs; i += 1) times.push(await once());
    times.sort((a, b) => a - b);
    return times[Math.floor(times.length / 2)];
  } finally {
    await agent.close();
  }
}
