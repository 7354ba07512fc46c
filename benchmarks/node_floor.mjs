// The Node floor: a warm Node process answering JSON requests on a pipe, one line each way.
// What a TypeScript hook's round trip cannot go below on this machine, measured beside it by
// node_roundtrip.py.
//
//   node node_floor.mjs   (requests on stdin, answers on stdout)

import { createInterface } from 'node:readline';

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  const payload = JSON.parse(line);
  process.stdout.write(JSON.stringify(payload.request) + '\n');
}
