// One call of a step-preparation or chain hook, in the Worker of its own that worker.mjs runs:
// the hook is a real ES module (no ADF sandbox rules, spec/js-runtime.md §3), type-stripped as
// ADF strips it, `@use-crux/core` resolved to the studio's stand-in (crux_core.mjs). A step hook
// gets the StepContext of spec/crux.md §2, and what it returns is snapshotted here, in
// JavaScript terms, before it crosses to Python (§3 to §5).

import { readFileSync } from 'node:fs';
import { registerHooks, stripTypeScriptTypes } from 'node:module';
import { relative, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parentPort } from 'node:worker_threads';
import * as crux from './crux_core.mjs';
import { made as stubObjects } from './crux_handles.mjs';

const CRUX = '@use-crux/core';
const CRUX_URL = new URL('./crux_core.mjs', import.meta.url).href;
const TYPESCRIPT = /\.m?ts$/;
// A value JSON cannot carry crosses as this object; the Python side reads it back as a JsValue.
// A key of the hook's own that is the mark followed by zero or more '~' crosses with one '~'
// more (and loses it on the Python side), so no object of the hook's can pass for a mark.
export const MARK = '__studio_js__';
const MARK_KEY = /^__studio_js__~*$/;

let job;
let root;
let done = false;
const reads = [];

let addIdentities = null;

function post(message) {
  if (done) return;
  done = true;
  const extra = { reads: [...reads] };
  if (addIdentities !== null) extra.add_identities = addIdentities;
  parentPort.postMessage({ ...message, extra });
}

// The identity of each use.add entry, which JSON loses: the reference tells contributors apart
// by object identity, not by their fields.
function identitiesOf(snap) {
  const adds = snap?.use?.add;
  if (!Array.isArray(adds)) return null;
  const numbers = new Map();
  return adds.map((entry) => {
    if (entry === null || typeof entry !== 'object') return null;
    if (stubObjects.has(entry)) return 'stub';
    if (!numbers.has(entry)) numbers.set(entry, numbers.size);
    return `object:${numbers.get(entry)}`;
  });
}

function fail(kind, message, details = {}) {
  post({ type: 'error', error: { kind, message, details } });
}

function installHooks() {
  process.setSourceMapsEnabled(true);
  registerHooks({
    resolve(specifier, context, next) {
      if (specifier === CRUX) return { url: CRUX_URL, format: 'module', shortCircuit: true };
      return next(specifier, context);
    },
    load(url, context, next) {
      const prepared = job?.prepared;
      if (prepared?.code && url === prepared.url) {
        return { format: 'module', source: prepared.code, shortCircuit: true };
      }
      if (!url.startsWith('file:') || !TYPESCRIPT.test(url)) return next(url, context);
      const { source } = next(url, { ...context, format: 'module' });
      // Transform mode, as ADF strips: enums, namespaces and parameter properties compile.
      const code = stripTypeScriptTypes(String(source), {
        mode: 'transform',
        sourceMap: true,
        sourceUrl: url,
      });
      return { format: 'module', source: code, shortCircuit: true };
    },
  });
}

// ---- where an error happened, in the user's files ---------------------------------------

const FRAME = /^\s*at (?:(.*?) \()?(?:file:\/\/)?(\/[^()]*?):(\d+):(\d+)\)?$/;
const fileLines = new Map();

function codeAt(file, line) {
  let lines = fileLines.get(file);
  if (lines === undefined) {
    try {
      lines = readFileSync(file, 'utf8').split('\n');
    } catch {
      lines = [];
    }
    fileLines.set(file, lines);
  }
  return lines[line - 1]?.trim() || null;
}

function framesOf(stack) {
  const frames = [];
  for (const text of String(stack ?? '').split('\n')) {
    const m = FRAME.exec(text);
    if (!m) continue;
    const file = decodeURIComponent(m[2]);
    if (!file.startsWith(root + sep)) continue;
    const line = Number(m[3]);
    const name = (m[1] ?? '').replace(/^(async |Module\.)+/, '');
    frames.push({
      file: relative(root, file),
      line,
      column: Number(m[4]),
      function: name && name !== '<anonymous>' ? name : '<module>',
      code: codeAt(file, line),
    });
  }
  return frames.reverse();
}

function contractError(err) {
  if (err === null || typeof err !== 'object') return null;
  if (err.name === 'ResourceReadError' && crux.RESOURCE_READ_REASONS.includes(err.reason)) {
    return { error: 'ResourceReadError', reason: err.reason, identity: err.identity ?? null };
  }
  if (err.name === 'PreparationError' && crux.PREPARATION_REASONS.includes(err.reason)) {
    return { error: 'PreparationError', reason: err.reason };
  }
  return null;
}

function failWith(err, kind = 'exception') {
  const { fn } = job;
  const isError = err !== null && typeof err === 'object' && 'message' in err;
  const name = isError ? String(err.name ?? 'Error') : typeof err;
  const text = isError ? String(err.message) : String(err);
  const frames = isError ? framesOf(err.stack) : [];
  const last = frames.at(-1);
  const at = last ? ` at ${last.file}:${last.line}:${last.column}` : '';
  fail(kind, `\`${fn}\` raised ${name}: ${text}${at}`, {
    frames,
    exception: name,
    contract_error: contractError(err),
  });
}

export function onStray(reason, what = 'unhandled promise rejection') {
  const isError = reason !== null && typeof reason === 'object' && 'message' in reason;
  failWith({
    name: isError ? reason.name : 'Error',
    message: `${what}: ${isError ? reason.message : String(reason)}`,
    stack: isError ? reason.stack : '',
  });
}

// ---- loading -----------------------------------------------------------------------------

function loadFailure(err) {
  const { path } = job;
  const message = String(err?.message ?? err);
  const missing = /does not provide an export named '([^']+)'/.exec(message);
  if (missing && (message.includes(`'${CRUX}'`) || message.includes(CRUX_URL))) {
    const have = Object.keys(crux).sort().join(', ');
    return fail(
      'load_failed',
      `${path} imports '${missing[1]}' from '${CRUX}', which the studio's stand-in for that ` +
        `unpublished package does not have (it has: ${have})`,
      { exception: 'SyntaxError', missing_export: missing[1] },
    );
  }
  const frames = framesOf(err?.stack);
  const where = /^(\/.*?):(\d+)\n/.exec(String(err?.stack ?? ''));
  if (!frames.length && where && where[1].startsWith(root + sep)) {
    const file = where[1];
    const line = Number(where[2]);
    frames.push({
      file: relative(root, file),
      line,
      function: '<module>',
      code: codeAt(file, line),
    });
  }
  const at = frames.length ? ` at ${frames.at(-1).file}:${frames.at(-1).line}` : '';
  return fail('load_failed', `loading ${path} raised ${err?.name ?? 'Error'}: ${message}${at}`, {
    frames,
    exception: String(err?.name ?? 'Error'),
  });
}

// ---- the step context ----------------------------------------------------------------------

function deepFreeze(value) {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze(value[key]);
  }
  return value;
}

function handleIdentity(handle) {
  if (typeof handle === 'string') return handle;
  if (handle === null || typeof handle !== 'object') return null;
  const found = handle.identity ?? handle.id;
  return typeof found === 'string' ? found : null;
}

function stepContext(payload, signal) {
  const declared = new Map();
  for (const entry of payload.resources ?? []) declared.set(entry.identity, entry);
  const pinned = new Map();
  const resources = Object.freeze({
    // Async, as the reference's mediator is; the first read of a handle pins its value.
    read: async (handle) => {
      const identity = handleIdentity(handle);
      const entry = identity === null ? undefined : declared.get(identity);
      if (entry === undefined) throw new crux.ResourceReadError('undeclared', identity);
      if ('failure' in entry) throw new crux.ResourceReadError(entry.failure, identity);
      if (!pinned.has(identity)) {
        pinned.set(identity, deepFreeze(structuredClone(entry.value ?? null)));
        reads.push(identity);
      }
      return pinned.get(identity);
    },
  });
  const context = payload.context;
  const stats = {};
  for (const [key, value] of Object.entries(context.stats ?? {})) {
    // The context is read-only (spec/crux.md §2), but Object.freeze cannot stop a Date's
    // setters: its time is an internal slot. Each read gives a Date of its own, so a hook may
    // change the one it holds (`d.setHours(0)`) and the context still says the step's time.
    const live = key === 'at' && typeof value === 'string';
    Object.defineProperty(stats, key, {
      ...(live ? { get: () => new Date(value) } : { value, writable: true }),
      enumerable: true,
      configurable: true,
    });
  }
  return Object.freeze({
    ...deepFreeze({ ...context, stats: undefined }),
    stats: deepFreeze(stats),
    resources,
    signal,
  });
}

// ---- the reference's snapshot of the returned value, then its crossing to Python -----------

class Unreadable extends Error {}

function spreadArray(value, where) {
  try {
    return [...value];
  } catch {
    throw new Unreadable(`${where} must be an array (or another iterable) to be read`);
  }
}

function snapshot(value) {
  if (!value) return undefined;
  if (typeof value !== 'object') return value;
  const out = {};
  if (value.use) {
    const use = {};
    if (value.use.add) use.add = spreadArray(value.use.add, 'use.add');
    if (value.use.remove) use.remove = spreadArray(value.use.remove, 'use.remove');
    out.use = use;
  }
  if (value.tools) out.tools = { ...value.tools };
  if (value.activeTools) out.activeTools = spreadArray(value.activeTools, 'activeTools');
  if ('model' in value) out.model = value.model;
  if (value.inputBudget) out.inputBudget = { ...value.inputBudget };
  return out;
}

function jsValue(kind, text, truthy) {
  return { [MARK]: kind, text, truthy };
}

// JSON for what JSON can hold; a JsValue mark for a value it cannot, so that the judge sees it
// where it is (a NaN budget fails V10, a function returned fails V1) instead of a silent null.
// Objects (class instances too) cross as their own enumerable properties, in their own order;
// an `undefined` property is left out and an `undefined` array item is null, as JSON.stringify
// does. `identities` numbers every object by identity for use.add.
function encode(value, ancestors = []) {
  switch (typeof value) {
    case 'undefined':
      return null;
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (Number.isFinite(value)) return value;
      return jsValue('number', String(value), !Number.isNaN(value));
    case 'bigint':
      return jsValue('bigint', `${value}n`, value !== 0n);
    case 'symbol':
      return jsValue('symbol', value.toString(), true);
    case 'function':
      return jsValue('function', `[function ${value.name || 'anonymous'}]`, true);
    default:
      break;
  }
  if (value === null) return null;
  if (value instanceof Date) {
    return jsValue('Date', Number.isNaN(+value) ? 'Invalid Date' : value.toISOString(), true);
  }
  if (ancestors.includes(value)) throw new Unreadable('the returned value contains itself (a cycle)');
  const inner = [...ancestors, value];
  if (Array.isArray(value)) return Array.from(value, (item) => encode(item, inner));
  const out = {};
  for (const key of Object.keys(value)) {
    const item = value[key];
    if (item === undefined) continue;
    // defineProperty: a key named "__proto__" stays an own key, as it was in the hook's object.
    Object.defineProperty(out, MARK_KEY.test(key) ? `${key}~` : key, {
      value: encode(item, inner),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

// The fields the reference reads from a contributor (and `id` from a remove selector). It reads
// them as properties, so a class instance's getter, a prototype's field or a non-enumerable
// property counts, where JSON would keep only the object's own enumerable keys.
const CONTRIBUTOR_FIELDS = ['id', 'kind', '_tag', 'protected', 'tools', 'children'];

function asRead(entry, fields, ancestors = []) {
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return entry;
  if (entry instanceof Date || ancestors.includes(entry)) return entry;
  const view = {};
  for (const key of Object.keys(entry)) {
    Object.defineProperty(view, key, {
      value: entry[key],
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  for (const field of fields) {
    if (Object.hasOwn(view, field)) continue;
    const found = entry[field];
    if (found !== undefined) view[field] = found;
  }
  if (Array.isArray(view.children)) {
    const inner = [...ancestors, entry];
    view.children = view.children.map((child) => asRead(child, fields, inner));
  }
  return view;
}

function readUse(use) {
  if (use === null || typeof use !== 'object') return use;
  const out = { ...use };
  if (Array.isArray(use.add)) out.add = use.add.map((e) => asRead(e, CONTRIBUTOR_FIELDS));
  if (Array.isArray(use.remove)) out.remove = use.remove.map((s) => asRead(s, ['id']));
  return out;
}

function crossing(snap) {
  if (snap === undefined) return 'null';
  if (snap !== null && typeof snap === 'object' && !(snap instanceof Date) && !Array.isArray(snap)) {
    const { model, ...rest } = snap;
    if ('use' in rest) rest.use = readUse(rest.use);
    const out = encode(rest);
    // `model` is kept whenever present, `undefined` included: the record counts its presence.
    if ('model' in snap) out.model = encode(model);
    return JSON.stringify(out);
  }
  return JSON.stringify(encode(snap));
}

// ---- the call --------------------------------------------------------------------------------

function typeOf(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'function') {
    return /^class\b/.test(Function.prototype.toString.call(value)) ? 'a class' : 'a function';
  }
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

// Done while the Worker waits for its call: the module loader's first use costs milliseconds
// that a call would otherwise wait for. No hook code runs here.
export async function prepareModules() {
  installHooks();
  await import('data:text/javascript,export default 0');
}

export async function runModule(received) {
  job = received;
  root = job.root;
  const { file, fn, api, rawResult, timeoutMs, resultLimit } = job;
  let hookModule;
  try {
    hookModule = await import(pathToFileURL(file).href);
  } catch (err) {
    return loadFailure(err);
  }
  const target = hookModule[fn];
  if (typeof target !== 'function') {
    const names = Object.keys(hookModule).sort();
    const found = names.filter((name) => typeof hookModule[name] === 'function');
    const exports = names.map((name) => `${name} (${typeOf(hookModule[name])})`);
    const what = !(fn in hookModule)
      ? fn === 'default'
        ? `${job.path} has no default export (\`export default\`)`
        : `\`${fn}\` is not exported by ${job.path}`
      : `\`${fn}\` exported by ${job.path} is ${typeOf(target)}, not a function`;
    return fail('function_missing', `${what}; its exports: ${exports.join(', ') || 'none'}`, {
      available: found,
      exports: names,
    });
  }
  const payload = JSON.parse(job.input);
  const controller = new AbortController();
  const argument = api === 'step' ? stepContext(payload, controller.signal) : payload;

  // The deadline never interrupts the callback: it fires the signal and the call stops waiting;
  // whatever the hook returns later is ignored.
  const late = Symbol('late');
  let timer;
  const deadline = new Promise((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new DOMException('Request preparation timed out.', 'TimeoutError'));
      resolve(late);
    }, timeoutMs);
  });
  let value;
  try {
    value = await Promise.race([Promise.resolve().then(() => target(argument)), deadline]);
  } catch (err) {
    clearTimeout(timer);
    return failWith(err);
  }
  clearTimeout(timer);
  if (value === late) {
    return fail('timeout', `\`${fn}\` did not settle within ${timeoutMs} ms`, {
      contract_error: api === 'step' ? { error: 'PreparationError', reason: 'timeout' } : null,
      timeout_ms: timeoutMs,
    });
  }
  let text;
  try {
    if (api === 'step') {
      // A contract may judge the value as returned: then the reference takes no snapshot.
      const snap = rawResult ? value : snapshot(value);
      addIdentities = identitiesOf(snap);
      text = crossing(snap);
    }
    else text = value === undefined ? 'null' : JSON.stringify(value);
  } catch (err) {
    const why = err instanceof Unreadable ? err.message : `${err?.name}: ${err?.message ?? err}`;
    return fail('invalid_result', `\`${fn}\` returned a value that cannot be read: ${why}`, {
      contract_error: api === 'step' ? { error: 'PreparationError', reason: 'callback' } : null,
    });
  }
  if (text === undefined) {
    return fail('invalid_result', `\`${fn}\` returned a value that is not JSON (${typeof value})`);
  }
  if (Buffer.byteLength(text) > resultLimit) {
    if (!done) {
      done = true;
      parentPort.postMessage({ type: 'result_over' });
    }
    return undefined;
  }
  return post({ type: 'result', text });
}

