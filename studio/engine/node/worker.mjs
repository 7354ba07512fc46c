// One call of a hook, in a Worker of its own. An ADF pre-LLM hook runs here: a fresh vm context
// with the reference's sandbox rules, the script compiled as the body of an async function, the
// result serialised as the reference serialises it. A step-preparation or chain hook (a module
// export, with no sandbox) runs through module_call.mjs. The host starts this Worker ahead of
// the call (the context is made before any hook code exists), sends it one call, and
// terminates it afterwards.

import { createRequire, SourceMap } from 'node:module';
import vm from 'node:vm';
import util from 'node:util';
import { parentPort } from 'node:worker_threads';
import { onStray, prepareModules, runModule } from './module_call.mjs';

let body, map, codeLines, source, path, fn, timeoutMs, outputLimit, resultLimit;
let MISSING, sourceMap, sourceLines, escaped, FRAME;
const hostRequire = createRequire(import.meta.url);
const ALLOWED = [
  'crypto', 'buffer', 'url', 'querystring', 'path', 'util', 'string_decoder', 'punycode',
  'assert', 'events', 'stream', 'zlib',
];
const PREFIX = '(async () => {';

// ---- output ----------------------------------------------------------------------------

const sizes = { stdout: 0, stderr: 0 };
let over = false;

function write(stream, text) {
  if (over) return;
  sizes[stream] += Buffer.byteLength(text);
  if (sizes[stream] > outputLimit) {
    // The host stops this Worker on this message; nothing more is worth sending.
    over = true;
    parentPort.postMessage({ type: 'over', stream, text });
    return;
  }
  parentPort.postMessage({ type: 'output', stream, text });
}

const show = (args) =>
  args.map((a) => (typeof a === 'string' ? a : util.inspect(a, { depth: 4 }))).join(' ');
const hookConsole = {
  log: (...a) => write('stdout', show(a) + '\n'),
  info: (...a) => write('stdout', show(a) + '\n'),
  debug: (...a) => write('stdout', show(a) + '\n'),
  warn: (...a) => write('stderr', '[warn] ' + show(a) + '\n'),
  error: (...a) => write('stderr', '[error] ' + show(a) + '\n'),
};

const hookProcess = {
  env: {},
  cwd: () => '/',
  exit: () => {
    throw new Error('process.exit() is not available in the sandbox');
  },
  nextTick: (callback, ...args) => queueMicrotask(() => callback(...args)),
  stdout: { write: (s) => (write('stdout', String(s)), true) },
  stderr: { write: (s) => (write('stderr', '[stderr] ' + String(s)), true) },
};

// ---- the sandbox -----------------------------------------------------------------------

async function __require(name) {
  if (ALLOWED.includes(name)) return hostRequire(name);
  throw new Error(
    `Module "${name}" is not available in the sandbox. Available modules: ${ALLOWED.join(', ')}`,
  );
}

function require() {
  throw new Error('require is not available in the sandbox');
}

// `adf.<method>(...)` is a call to the host (adf_calls.mjs), which answers with JSON text or a
// code; the hook gets values and Errors of its own realm.
const pendingAdf = new Map();
let adfSeq = 0;
let contextJson, ContextError;

function adfArgs(args) {
  const value = args.length === 0 ? {} : args.length === 1 ? args[0] : args;
  return JSON.parse(JSON.stringify(value) ?? 'null');
}

const adf = new Proxy(
  {},
  {
    get(_target, name) {
      if (typeof name !== 'string' || name === 'then') return undefined;
      return (...args) => {
        // Made here, in the hook's own frames, so that a failure points at the calling line.
        const error = new ContextError();
        return new Promise((resolve, reject) => {
          const seq = ++adfSeq;
          pendingAdf.set(seq, { resolve, reject, error });
          parentPort.postMessage({ type: 'adf', seq, method: name, args: adfArgs(args) });
        });
      };
    },
  },
);

function adfReplied(reply) {
  const waiting = pendingAdf.get(reply.seq);
  if (!waiting) return;
  pendingAdf.delete(reply.seq);
  if (reply.ok) return waiting.resolve(contextJson(reply.json));
  const { error } = waiting;
  // Defined, not assigned: the context's Error.prototype is frozen.
  const own = (value) => ({ value, writable: true, configurable: true, enumerable: false });
  Object.defineProperties(error, {
    message: own(reply.message),
    code: { ...own(reply.code), enumerable: true },
    stack: own(`Error: ${reply.message}\n${String(error.stack).split('\n').slice(1).join('\n')}`),
  });
  waiting.reject(error);
}

const sandbox = {
  console: hookConsole,
  process: hookProcess,
  setTimeout,
  clearTimeout,
  setInterval,
  clearInterval,
  queueMicrotask,
  structuredClone,
  atob,
  btoa,
  TextEncoder,
  TextDecoder,
  URL,
  URLSearchParams,
  Buffer,
  adf,
  require,
  __require,
};
const context = vm.createContext(sandbox, { codeGeneration: { strings: false, wasm: true } });
// Only the context's own built-ins: the values lent from this Worker's realm stay usable.
vm.runInContext(
  `const lent = new Set(${JSON.stringify(Object.keys(sandbox))});
   for (const name of Object.getOwnPropertyNames(globalThis)) {
     if (lent.has(name)) continue;
     const value = globalThis[name];
     if (typeof value === 'function' && value.prototype && /^[A-Z]/.test(name)) {
       Object.freeze(value.prototype);
     }
   }
   Object.freeze(Object.getPrototypeOf(async function () {}).constructor.prototype);
   Object.freeze(Object.getPrototypeOf(function* () {}));`,
  context,
);
contextJson = vm.runInContext('JSON.parse', context);
ContextError = vm.runInContext('Error', context);

// ---- where an error happened, in the user's file ---------------------------------------


function original(line, column) {
  if (!sourceMap) return { line, column };
  const found = sourceMap.findEntry(line - 1, column - 1);
  if (!found || found.originalLine === undefined) return { line, column };
  return { line: found.originalLine + 1, column: found.originalColumn + 1 };
}

function codeAt(line) {
  const text = sourceLines[line - 1];
  return text === undefined ? null : text.trim() || null;
}


function framesOf(stack) {
  const frames = [];
  for (const text of String(stack ?? '').split('\n')) {
    const m = FRAME.exec(text);
    // Lines past the user's code are the trailer that calls the function: not theirs.
    if (!m || Number(m[2]) > codeLines) continue;
    const where = original(Number(m[2]), Number(m[3]));
    const name = (m[1] ?? '').replace(/^async /, '');
    frames.push({
      file: path,
      line: where.line,
      column: where.column,
      function: name && !name.startsWith(PREFIX) && name !== '<anonymous>' ? name : '<script>',
    });
  }
  return frames.reverse();
}

function syntaxFrame(err) {
  const m = new RegExp(`^${escaped}:(\\d+)`).exec(String(err.stack ?? ''));
  if (!m) return [];
  const caret = String(err.stack).split('\n')[2] ?? '';
  const column = caret.indexOf('^') + 1 || 1;
  const where = original(Number(m[1]), Number(m[1]) === 1 ? Math.max(1, column - PREFIX.length) : column);
  return [{ file: path, line: where.line, column: where.column, function: '<script>' }];
}

function fail(kind, message, details = {}) {
  parentPort.postMessage({ type: 'error', error: { kind, message, details } });
}

function failWith(err, kind = 'exception') {
  if (err === null || err === undefined) {
    // The reference's worker reads err.message to report an error, which a thrown null or
    // undefined does not have: it posts nothing, and the call ends at the host's guard.
    fail(
      'timeout',
      `\`${fn}\` threw ${err}; ADF cannot report a thrown ${err}: its worker posts no result, ` +
        `the call ends at the ${timeoutMs + 2000} ms guard and ADF reports it as ` +
        `"Execution timed out after ${timeoutMs}ms"`,
      { thrown: String(err), adf_message: `Execution timed out after ${timeoutMs}ms`, quirk: 'throw_null' },
    );
    return;
  }
  // Errors made inside the context belong to its realm, so instanceof Error would miss them.
  const isError = typeof err === 'object' && 'message' in err;
  if (isError && err.message === MISSING && !framesOf(err.stack).length) {
    fail('function_missing', MISSING, { adf_message: MISSING });
    return;
  }
  const name = isError ? String(err.name ?? 'Error') : typeof err;
  const text = isError ? String(err.message) : String(err);
  const frames = isError ? framesOf(err.stack) : [];
  for (const frame of frames) frame.code = codeAt(frame.line);
  const at = frames.length ? ` at ${path}:${frames.at(-1).line}:${frames.at(-1).column}` : '';
  fail(kind, `\`${fn}\` raised ${name}: ${text}${at}`, {
    frames,
    exception: name,
    adf_message: isError ? String(err.message) : undefined,
  });
}

// ---- the call --------------------------------------------------------------------------

let moduleMode = false;

process.on('unhandledRejection', (reason) => {
  if (moduleMode) return onStray(reason);
  const isError = typeof reason === 'object' && reason !== null && 'message' in reason;
  failWith({
    name: isError ? reason.name : 'Error',
    message: `unhandled promise rejection: ${isError ? reason.message : String(reason)}`,
    stack: isError ? reason.stack : '',
  });
});
process.on('uncaughtException', (err) =>
  moduleMode ? onStray(err, 'uncaught exception') : failWith(err),
);

async function call(job) {
  ({ body, map, codeLines, source, path, fn, timeoutMs, outputLimit, resultLimit } = job);
  MISSING = `Function "${fn}" not found in "${path}".`;
  sourceMap = map ? new SourceMap(JSON.parse(map)) : null;
  sourceLines = source.split('\n');
  escaped = path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  FRAME = new RegExp(`^\\s*at (?:(.*?) \\()?${escaped}:(\\d+):(\\d+)\\)?$`);

  let script;
  try {
    script = new vm.Script(`${PREFIX}${body}})()`, {
      filename: path,
      columnOffset: -PREFIX.length,
    });
  } catch (err) {
    const frames = syntaxFrame(err);
    for (const frame of frames) frame.code = codeAt(frame.line);
    const at = frames.length ? ` at line ${frames[0].line}, column ${frames[0].column}` : '';
    fail('load_failed', `${path} has a syntax error${at}: ${err.message}`, {
      frames,
      exception: err.name,
      adf_message: err.message,
    });
  }

  if (script) {
    let timer;
    const expired = new Error(`Execution timed out after ${timeoutMs}ms`);
    const timedOut = new Promise((_, reject) => {
      timer = setTimeout(() => reject(expired), timeoutMs);
    });
    let value;
    let ok = false;
    try {
      value = await Promise.race([script.runInContext(context), timedOut]);
      ok = true;
    } catch (err) {
      if (err === expired) {
        fail('timeout', err.message, { adf_message: err.message });
      } else {
        failWith(err);
      }
    } finally {
      clearTimeout(timer);
    }
    if (ok) {
      let text;
      let refused;
      if (typeof value === 'string') text = value;
      else if (value !== undefined) {
        try {
          text = JSON.stringify(value, null, 2);
        } catch (err) {
          refused = String(err?.message ?? err);
          text = String(value);
        }
      }
      if (text === undefined) {
        fail('invalid_result', `\`${fn}\` returned no JSON request`, {
          adf_message: 'lambda returned no JSON request',
        });
      } else if (Buffer.byteLength(text) > resultLimit) {
        parentPort.postMessage({ type: 'result_over' });
      } else {
        parentPort.postMessage({ type: 'result', text, refused });
      }
    }
  }
}

await prepareModules();
parentPort.postMessage({ type: 'ready' });
// A module hook prints through the Worker's own console and process streams. Those reach the
// host through streams that may still be flushing when the result arrives, so here they go
// the way the sandbox console goes: as messages, in order, before the result.
function captureModuleOutput() {
  const out = (...a) => write('stdout', util.format(...a) + '\n');
  const err = (...a) => write('stderr', util.format(...a) + '\n');
  Object.assign(console, { log: out, info: out, debug: out, warn: err, error: err, trace: err });
  process.stdout.write = (s) => (write('stdout', String(s)), true);
  process.stderr.write = (s) => (write('stderr', String(s)), true);
}

parentPort.on('message', (message) => {
  if (message?.type === 'adf_reply') adfReplied(message);
});
parentPort.once('message', (job) => {
  moduleMode = job.mode === 'module';
  if (moduleMode) {
    outputLimit = job.outputLimit;
    captureModuleOutput();
  }
  (moduleMode ? runModule(job) : call(job)).catch((err) => fail('engine_failed', `the worker failed: ${err?.message ?? err}`));
});
