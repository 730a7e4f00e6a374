// The benchmark's sandbox, run in its own process so that its CPU (the job dry runs take ~10 ms each)
// does not share Converge's event loop: the bench then measures Converge against the latency bound.
//
// Protocol on stdio, one JSON object a line. The child reads its options (startSandbox's, minus `log`)
// from argv[2], and writes {"ready": env} once listening, then {"log": line} per answered request.
// The parent writes "sync <n>" on stdin; the child answers {"synced": n} after every log line before
// it, so that the parent counts a phase's requests completely.
import { createInterface } from 'node:readline';
import { setImmediate } from 'node:timers';
import { startSandbox } from '../../dist/sandbox/index.js';

const send = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);
// Log lines go out in one write per turn of the event loop: stdout to a pipe writes synchronously,
// and a write per request was the child's own CPU, not the sandbox's.
let pending = '';
const flush = () => {
  if (pending === '') return;
  process.stdout.write(pending);
  pending = '';
};
const log = (line) => {
  if (pending === '') setImmediate(flush);
  pending += `${JSON.stringify({ log: line })}\n`;
};
const options = JSON.parse(process.argv[2] ?? '{}');
const sandbox = await startSandbox({ ...options, log });
send({ ready: sandbox.env() });

const stop = async () => {
  await sandbox.close();
  flush();
  process.exit(0);
};
process.on('SIGTERM', stop);
const input = createInterface({ input: process.stdin });
input.on('line', (line) => {
  const [word, n] = line.split(' ');
  if (word !== 'sync') return;
  flush();
  send({ synced: Number(n) });
});
// The parent gone (stdin closed) means the bench ended, however it ended.
input.on('close', stop);
