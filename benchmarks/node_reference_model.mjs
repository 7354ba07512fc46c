// The reference runtime's model of a pre-LLM hook call, timed inside Node: for every call a
// fresh worker_threads Worker is created, builds a vm context with the sandbox's globals, runs
// the hook's script, posts the result and is terminated. Transpiles are cached, as the
// reference caches them. The 80 ms output drain of the reference is left out, so the figure
// is the model's floor.
//
//   node node_reference_model.mjs <hook.ts> <input.json> <n> <concurrency>
//
// Prints one JSON object: the milliseconds of each call, and the wall time of all of them.

import { readFileSync } from 'node:fs';
import { stripTypeScriptTypes } from 'node:module';
import { Worker } from 'node:worker_threads';

import { rewrite } from '../studio/engine/node/rewrite.mjs';

const [hookPath, inputPath, n, concurrency] = process.argv.slice(2);
const source = stripTypeScriptTypes(readFileSync(hookPath, 'utf8'), { mode: 'transform' });
const input = readFileSync(inputPath, 'utf8');

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const vm = require('node:vm');
const util = require('node:util');
const lines = { stdout: [], stderr: [] };
const show = (a) => a.map((x) => (typeof x === 'string' ? x : util.inspect(x, { depth: 4 }))).join(' ');
const sandbox = {
  console: {
    log: (...a) => lines.stdout.push(show(a)),
    info: (...a) => lines.stdout.push(show(a)),
    warn: (...a) => lines.stderr.push('[warn] ' + show(a)),
    error: (...a) => lines.stderr.push('[error] ' + show(a)),
  },
  process: { env: {}, cwd: () => '/', exit: () => { throw new Error('process.exit() is not available in the sandbox'); } },
  setTimeout, clearTimeout, setInterval, clearInterval, queueMicrotask, structuredClone,
  atob, btoa, TextEncoder, TextDecoder, URL, URLSearchParams, Buffer,
  require: () => { throw new Error('require is not available in the sandbox'); },
  __require: async (name) => require(name),
};
const context = vm.createContext(sandbox, { codeGeneration: { strings: false, wasm: true } });
vm.runInContext(
  'for (const name of Object.getOwnPropertyNames(globalThis)) {' +
    ' const v = globalThis[name];' +
    ' if (typeof v === "function" && v.prototype && /^[A-Z]/.test(name)) Object.freeze(v.prototype); }',
  context,
);
new vm.Script('(async () => {' + workerData.body + '})()', { filename: 'hook.ts' })
  .runInContext(context)
  .then((value) => parentPort.postMessage({ text: typeof value === 'string' ? value : JSON.stringify(value, null, 2) }))
  .catch((err) => parentPort.postMessage({ error: String(err && err.message) }));
`;

function once() {
  const started = performance.now();
  const body =
    rewrite(source) + `\n;return await main(${rewrite(input)});\n`;
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER, { eval: true, workerData: { body }, env: {} });
    worker.once('message', (message) => {
      worker.terminate();
      if (message.error) reject(new Error(message.error));
      else resolve(performance.now() - started);
    });
    worker.once('error', reject);
  });
}

const times = [];
let next = 0;
async function lane() {
  while (next < Number(n)) {
    next += 1;
    times.push(await once());
  }
}

for (let i = 0; i < 5; i += 1) await once();
const wall = performance.now();
await Promise.all(Array.from({ length: Number(concurrency) }, lane));
console.log(JSON.stringify({ times, wall_ms: performance.now() - wall }));
