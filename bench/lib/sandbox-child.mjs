// The benchmark's sandbox, run in its own process so that its CPU (a job's dry run, a page of
// workspaces) does not share Converge's event loop: the bench then measures Converge against the
// latency bound.
//
// Protocol on stdio, one JSON object a line. The child reads its options (startSandbox's, minus `log`)
// from argv[2] and writes {"ready": env} once listening. It counts the requests it answers per kind
// itself (bench/lib/requests.mjs): passing a line per request to the parent made the parent, which is
// Converge's process, parse thousands of lines while it was being measured. The parent writes
// "take <n>"; the child answers {"taken": n, "counts": {...}} with the counts since the last take.
// Every answer the parent has received by then is counted: the log hook runs as the answer is written.
import { createInterface } from 'node:readline';
import { startSandbox } from '../../dist/sandbox/index.js';
import { kindOfRequest } from './requests.mjs';

const send = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);
let counts = {};
const ANSWERED = /^[A-Z]+ \/\S* \d{3} /;
const log = (line) => {
  if (!ANSWERED.test(line)) return;
  const kind = kindOfRequest(line);
  counts[kind] = (counts[kind] ?? 0) + 1;
};
const options = JSON.parse(process.argv[2] ?? '{}');
const sandbox = await startSandbox({ ...options, log });
send({ ready: sandbox.env() });

const stop = async () => {
  await sandbox.close();
  process.exit(0);
};
process.on('SIGTERM', stop);
const input = createInterface({ input: process.stdin });
input.on('line', (line) => {
  const [word, n] = line.split(' ');
  if (word !== 'take') return;
  send({ taken: Number(n), counts });
  counts = {};
});
// The parent gone (stdin closed) means the bench ended, however it ended.
input.on('close', stop);
