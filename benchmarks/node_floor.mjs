// The Node floors: a warm Node process answering JSON requests on a pipe, one line each way,
// measured beside a TypeScript hook's round trip by node_roundtrip.py.
//
//   node node_floor.mjs isolated   (the floor of goal 6)
//   node node_floor.mjs bare       (no per-call isolation, for information)
//
// "isolated" answers each request from a fresh worker_threads Worker made for it, which parses
// the request and posts the request back, and is then terminated: the reference runtime's unit
// of isolation (spec/js-runtime.md §1), as the fork floor's unit is a forked child. "bare"
// parses and answers in the warm process itself: a pipe and two JSON passes, nothing more.
// Requests on stdin, answers on stdout.

import { createInterface } from 'node:readline';
import { Worker } from 'node:worker_threads';

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
parentPort.postMessage(JSON.stringify(JSON.parse(workerData).request));
`;

function inWorker(line) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER, { eval: true, workerData: line, env: {} });
    worker.once('message', (answer) => {
      // Not awaited: the answer is complete, and the thread's end is cleanup, as the fork
      // floor reaps its child after reading the answer.
      worker.terminate();
      resolve(answer);
    });
    worker.once('error', reject);
  });
}

const mode = process.argv[2] ?? 'isolated';
if (mode !== 'isolated' && mode !== 'bare') {
  process.stderr.write(`unknown mode ${mode}: isolated or bare\n`);
  process.exit(2);
}
const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  const answer =
    mode === 'bare' ? JSON.stringify(JSON.parse(line).request) : await inWorker(line);
  process.stdout.write(answer + '\n');
}
