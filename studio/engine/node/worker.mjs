// A Worker of the Node host, in one of two roles the host gives it through workerData.
//
// Pooled (ADF pre-LLM hooks, "script mode"): the Worker lives for many calls, one at a time, and
// each call runs in a vm context of its own with the reference's sandbox rules
// (spec/js-runtime.md §1), made ahead of the call and dropped after it. What a hook can reach
// of this Worker's own realm is frozen at start, the Function constructors of this realm refuse
// to run, and the context's globals are built inside the context by a bootstrap script, so that
// nothing one call does is seen by the next.
//
// One-shot (step and chain hooks, "module mode"): the hook is a real ES module run by
// module_call.mjs; module caches and globals live in this Worker's realm, so the Worker serves
// one call and is terminated after it.

import { createRequire, SourceMap } from 'node:module';
import util from 'node:util';
import vm from 'node:vm';
import { parentPort, workerData } from 'node:worker_threads';

const PREFIX = '(async () => {';
const ALLOWED = [
  'crypto', 'buffer', 'url', 'querystring', 'path', 'util', 'string_decoder', 'punycode',
  'assert', 'events', 'stream', 'zlib',
];
// After the function settles, output is drained until this long passes with nothing new, as
// the reference does; the studio bounds the drain at DRAIN_MAX_MS.
const DRAIN_QUIET_MS = 80;
const DRAIN_MAX_MS = 1000;
const hostRequire = createRequire(import.meta.url);

const show = (args) =>
  args.map((a) => (typeof a === 'string' ? a : util.inspect(a, { depth: 4 }))).join(' ');

// ---- one-shot: a module hook ---------------------------------------------------------------

async function serveOneModuleCall() {
  const { onStray, prepareModules, runModule } = await import('./module_call.mjs');
  const sizes = { stdout: 0, stderr: 0 };
  let outputLimit = Infinity;
  let over = false;
  const write = (stream, text) => {
    if (over) return;
    sizes[stream] += Buffer.byteLength(text);
    // The host stops this Worker on an 'over' message; nothing more is worth sending.
    over = sizes[stream] > outputLimit;
    parentPort.postMessage({ type: over ? 'over' : 'output', stream, text });
  };
  process.on('unhandledRejection', (reason) => onStray(reason));
  process.on('uncaughtException', (err) => onStray(err, 'uncaught exception'));
  await prepareModules();
  parentPort.postMessage({ type: 'ready' });
  parentPort.once('message', (job) => {
    outputLimit = job.outputLimit;
    // A module hook prints through the Worker's own console and process streams. Those reach
    // the host through streams that may still be flushing when the result arrives, so here
    // they go as messages, in order, before the result.
    const out = (...a) => write('stdout', util.format(...a) + '\n');
    const err = (...a) => write('stderr', util.format(...a) + '\n');
    Object.assign(console, { log: out, info: out, debug: out, warn: err, error: err, trace: err });
    process.stdout.write = (s) => (write('stdout', String(s)), true);
    process.stderr.write = (s) => (write('stderr', String(s)), true);
    runModule(job).catch((e) =>
      parentPort.postMessage({
        type: 'error',
        error: { kind: 'engine_failed', message: `the worker failed: ${e?.message ?? e}`, details: {} },
      }),
    );
  });
}

// ---- pooled: this realm, made safe to share between calls -----------------------------------

// A hook reaches this realm through what it is lent (Buffer, URL, the allowed modules, errors
// they throw): from any of those, `.constructor.constructor` is this realm's Function, which
// compiles strings with this Worker's globals in scope. Node takes no flag for a single Worker
// that stops that: a Worker's execArgv refuses --disallow-code-generation-from-strings, and in
// the host's own arguments it would hold for every Worker, the module hooks' too, which are real
// modules that may use it. --frozen-intrinsics is accepted by a Worker, but it freezes the
// constructors in place before this code runs and leaves Buffer, URL and the rest unfrozen. So
// the constructors are replaced by ones that refuse, and then this realm is frozen here.
function refuseCodeFromStrings() {
  const prototypes = [
    Function.prototype,
    Object.getPrototypeOf(async function () {}),
    Object.getPrototypeOf(function* () {}),
    Object.getPrototypeOf(async function* () {}),
  ];
  for (const prototype of prototypes) {
    const name = prototype.constructor.name;
    const refuse = {
      [name]() {
        throw new EvalError('Code generation from strings disallowed for this context');
      },
    }[name];
    Object.defineProperty(refuse, 'prototype', { value: prototype });
    Object.defineProperty(prototype, 'constructor', { value: refuse, configurable: true });
  }
}

// A data property of a frozen prototype cannot be shadowed by assignment on an object that
// inherits it ("the override mistake"), which Node's own code does in places; such properties
// become accessors whose setter defines the property on the assigned object instead, as
// Node's --frozen-intrinsics does.
function allowOverrides(prototype) {
  for (const key of Reflect.ownKeys(prototype)) {
    const desc = Object.getOwnPropertyDescriptor(prototype, key);
    if (!('value' in desc) || !desc.configurable) continue;
    const { value } = desc;
    Object.defineProperty(prototype, key, {
      get: () => value,
      set(next) {
        if (this === prototype) {
          throw new TypeError(`Cannot assign to read only property '${String(key)}'`);
        }
        Object.defineProperty(this, key, {
          value: next,
          writable: true,
          enumerable: true,
          configurable: true,
        });
      },
      enumerable: desc.enumerable,
      configurable: false,
    });
  }
}

function deepFreeze(roots, prototypes) {
  const seen = new WeakSet();
  const stack = [...roots];
  while (stack.length) {
    const value = stack.pop();
    if ((typeof value !== 'object' && typeof value !== 'function') || value === null) continue;
    if (seen.has(value)) continue;
    seen.add(value);
    if (prototypes.has(value)) allowOverrides(value);
    const own = typeof value === 'function' && Object.getOwnPropertyDescriptor(value, 'prototype');
    if (own && typeof own.value === 'object' && own.value !== null) prototypes.add(own.value);
    Object.freeze(value);
    stack.push(Object.getPrototypeOf(value));
    for (const key of Reflect.ownKeys(value)) {
      const desc = Object.getOwnPropertyDescriptor(value, key);
      if ('value' in desc) stack.push(desc.value);
      else stack.push(desc.get, desc.set);
    }
  }
}

const LENT = { Buffer, URL, URLSearchParams, TextEncoder, TextDecoder };
// Allowed modules made only of functions and classes, with no state of their own that a call
// could change and no cached objects they hand out: frozen whole at start, they can be lent to
// every call. Lending any other allowed module retires the Worker after the call.
const SHARED_MODULES = ['path', 'url', 'querystring', 'punycode', 'string_decoder', 'buffer'];
// A hook's custom inspect function gets util.inspect, whose defaultOptions setter (which cannot
// be redefined) changes every later inspect: each call ends by setting them back.
const INSPECT_DEFAULTS = { ...util.inspect.defaultOptions };

function hardenRealm() {
  refuseCodeFromStrings();
  // Small Buffers are cut from a shared slab by default: code of an ended call that still runs
  // (see uncaughtException below) could write into a later call's Buffers through it.
  Buffer.poolSize = 0;
  // (V8 gives a context a console of its own; this realm's is Node's, which keeps state.)
  const names = vm.runInNewContext('Object.getOwnPropertyNames(globalThis)');
  const roots = names
    .filter((n) => n !== 'globalThis' && n !== 'console')
    .map((n) => globalThis[n]);
  const hidden = [
    Object.getPrototypeOf(Uint8Array),
    Object.getPrototypeOf(async function () {}),
    Object.getPrototypeOf(function* () {}),
    Object.getPrototypeOf(async function* () {}),
    Object.getPrototypeOf([][Symbol.iterator]()),
    Object.getPrototypeOf(''[Symbol.iterator]()),
    Object.getPrototypeOf(new Map()[Symbol.iterator]()),
    Object.getPrototypeOf(new Set()[Symbol.iterator]()),
    Object.getPrototypeOf(/a/[Symbol.matchAll]('')),
    Object.getPrototypeOf(function* () {}).prototype,
    Object.getPrototypeOf(async function* () {}).prototype,
    Object.getPrototypeOf(Object.getPrototypeOf(async function* () {}).prototype),
  ];
  roots.push(...hidden, ...Object.values(LENT), util.inspect, atob, btoa, structuredClone);
  for (const name of SHARED_MODULES) {
    const module = hostRequire(name);
    // A lazy getter that defines its value on first use would fail on a frozen module.
    for (const key of Reflect.ownKeys(module)) module[key];
    roots.push(module);
  }
  const prototypes = new Set(hidden.filter((h) => typeof h === 'object'));
  for (const root of roots) {
    if (typeof root === 'function' && root.prototype) prototypes.add(root.prototype);
  }
  for (const h of hidden) if (typeof h === 'function' && h.prototype) prototypes.add(h.prototype);
  deepFreeze(roots, prototypes);
}

// ---- pooled: a context's globals, built inside it --------------------------------------------

// Run in each fresh context. It gets a few functions of this realm (`outer`) and the frozen
// lent classes, closes over them and defines the globals as functions of the context's own
// realm: a hook holds no function of this realm but the lent classes. Errors from outer
// functions come back as [false, name, message] and are thrown as the context's own errors.
const BOOTSTRAP = `(function (outer, lent) {
  'use strict';
  const { print, later, cancel, soon, ask, load, clone, decode, encode } = outer;
  const parse = JSON.parse;
  const stringify = JSON.stringify;
  const define = (target, name, value) =>
    Object.defineProperty(target, name, { value, writable: true, configurable: true });
  const failure = (name, message) => {
    const error = name === 'TypeError' ? new TypeError(message) : new Error(message);
    if (name !== 'Error' && name !== 'TypeError') define(error, 'name', name);
    return error;
  };
  const via = (name, fn) => define(
    { [name](...args) {
      const [ok, value, message] = fn(...args);
      if (ok) return value;
      throw failure(value, message);
    } }[name], 'length', fn.length);

  const console = {
    log: (...a) => print('stdout', '', a),
    info: (...a) => print('stdout', '', a),
    debug: (...a) => print('stdout', '', a),
    warn: (...a) => print('stderr', '[warn] ', a),
    error: (...a) => print('stderr', '[error] ', a),
  };
  const queueMicrotask = (callback) => {
    if (typeof callback !== 'function') {
      throw new TypeError('The "callback" argument must be of type function');
    }
    soon(callback);
  };
  const process = {
    env: {},
    cwd: () => '/',
    exit: () => {
      throw new Error('process.exit() is not available in the sandbox');
    },
    nextTick: (callback, ...args) => queueMicrotask(() => callback(...args)),
    stdout: { write: (s) => (print('stdout', '', [String(s)], true), true) },
    stderr: { write: (s) => (print('stderr', '[stderr] ', [String(s)], true), true) },
  };

  class Timeout {
    #id;
    constructor(id) { this.#id = id; }
    ref() { return this; }
    unref() { return this; }
    hasRef() { return true; }
    close() { cancel(this.#id); return this; }
    [Symbol.toPrimitive]() { return this.#id; }
  }
  const timer = (repeat) => (callback, ms, ...args) => {
    if (typeof callback !== 'function') {
      throw new TypeError('The "callback" argument must be of type function');
    }
    return new Timeout(later(repeat, callback, Number(ms) || 0, args));
  };
  const clear = (handle) => {
    if (handle !== undefined && handle !== null) cancel(Number(handle));
  };

  const waiting = new Map();
  const adf = new Proxy(Object.freeze(Object.create(null)), {
    get(_target, name) {
      // Not a method named "then": \`await adf\` gives adf.
      if (typeof name !== 'string' || name === 'then') return undefined;
      return async (...args) => {
        const arg = args.length === 0 ? {} : args.length === 1 ? args[0] : args;
        const text = stringify(arg) ?? 'null';
        // Made here, in the hook's own frames, so that a failure points at the calling line.
        const error = new Error();
        return new Promise((resolve, reject) =>
          waiting.set(ask(name, text), { resolve, reject, error }),
        );
      };
    },
  });
  const settle = (seq, ok, json, code, message) => {
    const entry = waiting.get(seq);
    if (!entry) return;
    waiting.delete(seq);
    if (!ok) {
      const { error } = entry;
      // Defined, not assigned: Error.prototype is frozen.
      const own = (value) => ({ value, writable: true, configurable: true, enumerable: false });
      const frames = String(error.stack).split('\\n').slice(1).join('\\n');
      Object.defineProperties(error, {
        message: own(message),
        code: { ...own(code), enumerable: true },
        stack: own('Error: ' + message + '\\n' + frames),
      });
      entry.reject(error);
      return;
    }
    try {
      entry.resolve(parse(json));
    } catch (error) {
      entry.reject(error);
    }
  };

  const globals = {
    console,
    process,
    setTimeout: timer(false),
    clearTimeout: clear,
    setInterval: timer(true),
    clearInterval: clear,
    queueMicrotask,
    structuredClone: via('structuredClone', clone),
    atob: via('atob', decode),
    btoa: via('btoa', encode),
    ...lent,
    adf,
    require: function require() {
      throw new Error('require is not available in the sandbox');
    },
    __require: async function __require(name) {
      const [ok, value, message] = load(String(name));
      if (ok) return value;
      throw failure(value, message);
    },
  };
  for (const name of Object.keys(globals)) define(globalThis, name, globals[name]);

  // The context's own built-ins, as the reference freezes them.
  for (const name of Object.getOwnPropertyNames(globalThis)) {
    if (Object.hasOwn(globals, name)) continue;
    const value = globalThis[name];
    if (typeof value === 'function' && value.prototype && /^[A-Z]/.test(name)) {
      Object.freeze(value.prototype);
    }
  }
  Object.freeze(Object.getPrototypeOf(async function () {}).constructor.prototype);
  Object.freeze(Object.getPrototypeOf(function* () {}));
  return { settle, Promise, Error };
})`;

// ---- pooled: where an error happened, in the user's file -----------------------------------

function original(c, line, column) {
  if (!c.sourceMap) return { line, column };
  const found = c.sourceMap.findEntry(line - 1, column - 1);
  if (!found || found.originalLine === undefined) return { line, column };
  return { line: found.originalLine + 1, column: found.originalColumn + 1 };
}

function codeAt(c, line) {
  const text = c.sourceLines[line - 1];
  return text === undefined ? null : text.trim() || null;
}

function framesOf(c, stack) {
  const frames = [];
  for (const text of String(stack ?? '').split('\n')) {
    const m = c.frame.exec(text);
    // Lines past the user's code are the trailer that calls the function: not theirs.
    if (!m || Number(m[2]) > c.codeLines) continue;
    const where = original(c, Number(m[2]), Number(m[3]));
    const name = (m[1] ?? '').replace(/^async /, '');
    frames.push({
      file: c.path,
      line: where.line,
      column: where.column,
      function: name && !name.startsWith(PREFIX) && name !== '<anonymous>' ? name : '<script>',
    });
  }
  return frames.reverse();
}

function syntaxFrame(c, err) {
  const m = new RegExp(`^${c.escaped}:(\\d+)`).exec(String(err.stack ?? ''));
  if (!m) return [];
  const caret = String(err.stack).split('\n')[2] ?? '';
  const column = caret.indexOf('^') + 1 || 1;
  const line = Number(m[1]);
  const where = original(c, line, line === 1 ? Math.max(1, column - PREFIX.length) : column);
  return [{ file: c.path, line: where.line, column: where.column, function: '<script>' }];
}

// ---- pooled: the calls ---------------------------------------------------------------------

let current = null;
let spare = null;
let seqs = 0;

// A context with its globals, before any call is known: its outer functions act for whichever
// call takes it (`slot.call`), and only while that call is live.
function makeContext() {
  const slot = { call: null };
  const live = () => (slot.call && !slot.call.ended ? slot.call : null);
  const guard = (fn) => (...args) => {
    try {
      return [true, fn(...args)];
    } catch (err) {
      return [false, String(err?.name ?? 'Error'), String(err?.message ?? err)];
    }
  };
  const outer = {
    print(stream, prefix, args, raw) {
      const c = live();
      if (c) write(c, stream, prefix + (raw ? args[0] : show(args)) + (raw ? '' : '\n'));
    },
    later(repeat, callback, ms, args) {
      const c = live();
      if (!c) return 0;
      const id = ++c.timerIds;
      const run = () => {
        if (!repeat) c.timers.delete(id);
        if (live() !== c) return;
        try {
          Reflect.apply(callback, undefined, args);
        } catch (err) {
          failWith(c, err);
        }
        if (!repeat) c.wake?.();
      };
      c.timers.set(id, (repeat ? setInterval : setTimeout)(run, ms));
      return id;
    },
    cancel(id) {
      const c = live();
      if (!c || !c.timers.has(id)) return;
      clearTimeout(c.timers.get(id));
      c.timers.delete(id);
      c.wake?.();
    },
    soon(callback) {
      const c = live();
      if (!c) return;
      queueMicrotask(() => {
        if (live() !== c) return;
        try {
          callback();
        } catch (err) {
          failWith(c, err);
        }
      });
    },
    ask(method, text) {
      const c = live();
      const seq = ++seqs;
      if (!c) return seq;
      c.asked.add(seq);
      parentPort.postMessage({ type: 'adf', seq, method, args: JSON.parse(text) });
      return seq;
    },
    load: guard((name) => {
      if (!ALLOWED.includes(name)) {
        throw new Error(
          `Module "${name}" is not available in the sandbox. Available modules: ${ALLOWED.join(', ')}`,
        );
      }
      // The other built-in modules keep state a call could change (defaults, caches), so a
      // Worker that lent one serves no further call.
      const c = live();
      if (c && !SHARED_MODULES.includes(name)) c.lentModule = true;
      return hostRequire(name);
    }),
    clone: guard((value, options) => structuredClone(value, options)),
    decode: guard((text) => atob(text)),
    encode: guard((text) => btoa(text)),
  };
  const context = vm.createContext(vm.constants.DONT_CONTEXTIFY, {
    codeGeneration: { strings: false, wasm: true },
  });
  const inside = bootstrap.runInContext(context)(outer, { ...LENT });
  return { context, slot, inside };
}

function write(c, stream, text) {
  if (c.over || c.ended) return;
  c.sizes[stream] += Buffer.byteLength(text);
  c.lastOutput = performance.now();
  // The host stops this Worker on an 'over' message; nothing more is worth sending.
  c.over = c.sizes[stream] > c.outputLimit;
  parentPort.postMessage({ type: c.over ? 'over' : 'output', stream, text });
}

// The call's last message. The call ends first: its timers are cleared and its context's outer
// functions go inert, so nothing of it reaches the host after this message.
function finish(c, message) {
  if (c.ended) return;
  c.ended = true;
  for (const handle of c.timers.values()) clearTimeout(handle);
  c.timers.clear();
  c.asked.clear();
  util.inspect.defaultOptions = INSPECT_DEFAULTS;
  if (current === c) current = null;
  parentPort.postMessage(c.lentModule ? { ...message, retire: 'lent_module' } : message);
  // The next call's context is made now, while the reply travels: a V8 context and its globals
  // are most of this Worker's work for a call. Made later (on the next turn of the event loop)
  // it could come after the next call has arrived, which then makes one for itself and has the
  // spare made in the middle of it. A Worker retired after this call serves no next one.
  if (!c.lentModule) spare ??= makeContext();
}

function fail(c, kind, message, details = {}) {
  finish(c, { type: 'error', error: { kind, message, details } });
}

function failWith(c, err, kind = 'exception') {
  if (c.ended) return;
  if (err === null || err === undefined) {
    // The reference's worker reads err.message to report an error, which a thrown null or
    // undefined does not have: it posts nothing, and the call ends at the host's guard.
    const { fn, timeoutMs } = c;
    fail(
      c,
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
  if (isError && err.message === c.missing && !framesOf(c, err.stack).length) {
    fail(c, 'function_missing', c.missing, { adf_message: c.missing });
    return;
  }
  const name = isError ? String(err.name ?? 'Error') : typeof err;
  const text = isError ? String(err.message) : String(err);
  const frames = isError ? framesOf(c, err.stack) : [];
  for (const frame of frames) frame.code = codeAt(c, frame.line);
  const at = frames.length ? ` at ${c.path}:${frames.at(-1).line}:${frames.at(-1).column}` : '';
  fail(c, kind, `\`${c.fn}\` raised ${name}: ${text}${at}`, {
    frames,
    exception: name,
    adf_message: isError ? String(err.message) : undefined,
  });
}

// Output a settled call may still write comes from what it left pending: timers and host
// calls. With none, nothing more can print and the call ends at once; otherwise it ends when
// they are all gone, or DRAIN_QUIET_MS pass with nothing new, or at DRAIN_MAX_MS.
async function drain(c) {
  // Every microtask the function queued has run before this.
  await new Promise((resolve) => setImmediate(resolve));
  if (!c.timers.size && !c.asked.size) return;
  const settled = performance.now();
  await new Promise((resolve) => {
    let deadline = null;
    const check = () => {
      clearTimeout(deadline);
      if (c.ended || (!c.timers.size && !c.asked.size)) {
        c.wake = null;
        setImmediate(() => (c.timers.size || c.asked.size ? check() : resolve()));
        return;
      }
      const now = performance.now();
      const until = Math.min(
        settled + DRAIN_MAX_MS,
        Math.max(settled, c.lastOutput) + DRAIN_QUIET_MS,
      );
      if (now >= until) {
        c.wake = null;
        resolve();
        return;
      }
      c.wake = check;
      deadline = setTimeout(check, until - now);
    };
    check();
  });
}

function serialise(c, value) {
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
    fail(c, 'invalid_result', `\`${c.fn}\` returned no JSON request`, {
      adf_message: 'lambda returned no JSON request',
    });
  } else if (Buffer.byteLength(text) > c.resultLimit) {
    finish(c, { type: 'result_over' });
  } else {
    finish(c, { type: 'result', text, refused });
  }
}

// What only an error's report reads (the source map, the lines, the stack-frame pattern),
// made on first use rather than for every call.
function lazily(target, name, make) {
  Object.defineProperty(target, name, {
    get() {
      const value = make();
      Object.defineProperty(target, name, { value });
      return value;
    },
    configurable: true,
  });
}

async function call(job) {
  const { path, fn } = job;
  const escaped = path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const c = {
    ...job,
    missing: `Function "${fn}" not found in "${path}".`,
    escaped,
    sizes: { stdout: 0, stderr: 0 },
    over: false,
    ended: false,
    lastOutput: 0,
    timers: new Map(),
    timerIds: 0,
    asked: new Set(),
    wake: null,
    lentModule: false,
  };
  lazily(c, 'sourceMap', () => (job.map ? new SourceMap(JSON.parse(job.map)) : null));
  lazily(c, 'sourceLines', () => job.source.split('\n'));
  lazily(c, 'frame', () => new RegExp(`^\\s*at (?:(.*?) \\()?${escaped}:(\\d+):(\\d+)\\)?$`));
  const sandbox = spare ?? makeContext();
  spare = null;
  sandbox.slot.call = c;
  c.inside = sandbox.inside;
  current = c;

  let script;
  try {
    script = new vm.Script(`${PREFIX}${job.body}})()`, {
      filename: path,
      columnOffset: -PREFIX.length,
    });
  } catch (err) {
    const frames = syntaxFrame(c, err);
    for (const frame of frames) frame.code = codeAt(c, frame.line);
    const at = frames.length ? ` at line ${frames[0].line}, column ${frames[0].column}` : '';
    fail(c, 'load_failed', `${path} has a syntax error${at}: ${err.message}`, {
      frames,
      exception: err.name,
      adf_message: err.message,
    });
    return;
  }

  let timer;
  const expired = new Error(`Execution timed out after ${job.timeoutMs}ms`);
  const timedOut = new Promise((_, reject) => {
    timer = setTimeout(() => reject(expired), job.timeoutMs);
  });
  let value;
  let ok = false;
  try {
    value = await Promise.race([script.runInContext(sandbox.context), timedOut]);
    ok = true;
  } catch (err) {
    if (err === expired) {
      fail(c, 'timeout', err.message, { adf_message: err.message });
      return;
    }
    if (c.ended) return;
    await drain(c);
    failWith(c, err);
    return;
  } finally {
    clearTimeout(timer);
  }
  if (ok && !c.ended) {
    await drain(c);
    serialise(c, value);
  }
}

function onReply(message) {
  const c = current;
  if (!c || c.ended || !c.asked.delete(message.seq)) return;
  try {
    c.inside.settle(
      message.seq,
      message.ok === true,
      String(message.json ?? 'null'),
      String(message.code ?? ''),
      String(message.message ?? ''),
    );
  } finally {
    c.wake?.();
  }
}

// A rejection fails the live call if its promise was made in that call's context or in this
// realm (by a lent module); one from an ended call's context is dropped with that context.
function onRejection(reason, promise) {
  const c = current;
  if (!c || c.ended) return;
  if (!(promise instanceof c.inside.Promise) && !(promise instanceof Promise)) return;
  const isError = typeof reason === 'object' && reason !== null && 'message' in reason;
  failWith(c, {
    name: isError ? reason.name : 'Error',
    message: `unhandled promise rejection: ${isError ? reason.message : String(reason)}`,
    stack: isError ? reason.stack : '',
  });
}

let bootstrap;

function servePool() {
  hardenRealm();
  bootstrap = new vm.Script(BOOTSTRAP, { filename: 'sandbox-bootstrap' });
  spare = makeContext();
  process.on('unhandledRejection', onRejection);
  // Hook code can still run after its call ended (a FinalizationRegistry callback, a promise
  // settled by WebAssembly or Atomics.waitAsync): what it throws belongs to an ended context and
  // is dropped. Only this realm's errors and the live context's fail the live call.
  process.on('uncaughtException', (err) => {
    const c = current;
    if (!c || typeof err !== 'object' || err === null) return;
    if (err instanceof c.inside.Error) failWith(c, err);
    else if (err instanceof Error) failWith(c, err, 'engine_failed');
  });
  parentPort.on('message', (message) => {
    if (message.type === 'adf_reply') onReply(message);
    else if (message.type === 'call') {
      call(message).catch((err) => {
        if (current) fail(current, 'engine_failed', `the worker failed: ${err?.message ?? err}`);
      });
    }
  });
  parentPort.postMessage({ type: 'ready' });
}

if (workerData?.pooled) servePool();
else await serveOneModuleCall();
