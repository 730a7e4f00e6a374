// The benchmark's sandbox, run in its own process so that its CPU (the job dry runs take ~10 ms each)
// does not share Converge's event loop: the bench then measures Converge against the latency bound.
//
// Protocol on stdio, one JSON object a line. The child reads its options (startSandbox's, minus `log`)
// from argv[2], and writes {"ready": env} once listening, then {"log": line} per answered request.
// The parent writes "sync <n>" on stdin; the child answers {"synced": n} after every log line before
// it, so that the parent counts a phase's requests completely.
import { createInterface } from 'node:readline';
import { startSandbox } from '../../dist/sandbox/index.js';

const send = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);
const options = JSON.parse(process.argv[2] ?? '{}');
const sandbox = await startSandbox({ ...options, log: (line) => send({ log: line }) });
send({ ready: sandbox.env() });

const stop = async () => {
  await sandbox.close();
  process.exit(0);
};
process.on('SIGTERM', stop);
const input = createInterface({ input: process.stdin });
input.on('line', (line) => {
  const [word, n] = line.split(' ');
  if (word === 'sync') send({ synced: Number(n) });
});
// The parent gone (stdin closed) means the bench ended, however it ended.
input.on('close', stop);
