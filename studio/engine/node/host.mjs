// The Node host of one workspace. It reads call frames from the studio on stdin and answers
// each with one frame on stdout. A pre-LLM hook runs in a fresh vm context on one of a few
// long-lived Workers (worker.mjs makes that context ahead and keeps its own realm out of a
// hook's reach); a step or chain hook runs in a Worker of its own, terminated after the call.
//
// A frame is a 4-byte header length, an 8-byte body length (both big-endian), the header
// (JSON) and the body (raw bytes: the hook's input, or the text of its result).

import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { stripTypeScriptTypes } from 'node:module';
import { resolve as resolvePath } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

import { answerAdf, studioAnswered, takeCalls } from './adf_calls.mjs';
import { rewrite } from './rewrite.mjs';

const WORKER = new URL('./worker.mjs', import.meta.url);
// In the sandbox this host is process 2 of a PID namespace of its own, whose process 1 only
// waits: every other process in it was started by a module hook (the only hooks that can start
// one), and is ended as soon as no module call is running.
const SANDBOXED = process.env.HOOK_STUDIO_SANDBOXED === '1' && process.pid === 2;
let moduleCallsRunning = 0;

function endStartedProcesses() {
  if (!SANDBOXED || moduleCallsRunning > 0) return;
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (Number.isInteger(pid) && pid > 2) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
  }
}
const HARD_STOP_GRACE_MS = 2000;
const transpiles = new Map();
const TRANSPILE_CACHE_SIZE = 64;
const calls = new Map();
const EMPTY = Buffer.alloc(0);

// ---- frames ----------------------------------------------------------------------------

// A small frame goes in one write: each write is a system call and may wake the studio alone.
const ONE_WRITE_BYTES = 64 << 10;

function send(header, body = EMPTY) {
  const head = Buffer.from(JSON.stringify(header), 'utf8');
  const lengths = Buffer.alloc(12);
  lengths.writeUInt32BE(head.length, 0);
  lengths.writeBigUInt64BE(BigInt(body.length), 4);
  if (body.length <= ONE_WRITE_BYTES) {
    process.stdout.write(Buffer.concat([lengths, head, body]));
    return;
  }
  process.stdout.write(Buffer.concat([lengths, head]));
  process.stdout.write(body);
}

let pending = [];
let pendingSize = 0;

function take(size) {
  const joined = pending.length === 1 ? pending[0] : Buffer.concat(pending, pendingSize);
  const out = joined.subarray(0, size);
  const rest = joined.subarray(size);
  pending = rest.length ? [rest] : [];
  pendingSize = rest.length;
  return out;
}

let wanted = null;

process.stdin.on('data', (chunk) => {
  pending.push(chunk);
  pendingSize += chunk.length;
  for (;;) {
    if (wanted === null) {
      if (pendingSize < 12) return;
      const lengths = take(12);
      wanted = { head: lengths.readUInt32BE(0), body: Number(lengths.readBigUInt64BE(4)) };
    }
    if (pendingSize < wanted.head + wanted.body) return;
    const header = JSON.parse(take(wanted.head).toString('utf8'));
    const body = Buffer.from(take(wanted.body));
    wanted = null;
    onFrame(header, body);
  }
});
// The studio closing the pipe is the order to stop; running Workers end with the process. A
// retired Worker that has not ended may be stuck in a native call, which process.exit() would
// wait for (still allocating, should that call be a memory bomb): then the host ends at once.
process.stdin.on('end', () => {
  if (draining.size) process.kill(process.pid, 'SIGKILL');
  else process.exit(0);
});

function onFrame(header, body) {
  if (header.op === 'call') startCall(header, body);
  else if (header.op === 'cancel') calls.get(header.id)?.stop('cancelled', 'Execution cancelled');
  else if (header.op === 'answer') studioAnswered(header, body);
  else if (header.op === 'warm') warm(header.memory_bytes);
}

// Ahead of the first call, so that it costs what the next ones cost: the TypeScript parser
// loaded (the first strip in a process takes a hundred milliseconds or more) and a pooled Worker
// started with the workspace's memory limit.
function warm(memoryBytes) {
  transpile('warm-up.ts', 'const ready: boolean = true;\n');
  topUp(memoryBytes, true);
}

// ---- building the script ---------------------------------------------------------------

function transpile(path, text) {
  // The path is part of the key: it names the file in the source map and in a failure.
  const key = `${path}\0${text}`;
  let done = transpiles.get(key);
  if (done === undefined) {
    try {
      const code = stripTypeScriptTypes(text, { mode: 'transform', sourceMap: true, sourceUrl: path });
      const at = code.lastIndexOf('\n//# sourceMappingURL=data:application/json;base64,');
      const map =
        at < 0 ? null : Buffer.from(code.slice(at).split('base64,')[1], 'base64').toString();
      done = { code: at < 0 ? code : code.slice(0, at), map };
    } catch (err) {
      const message = String(err?.message ?? err);
      done = { error: `Transpilation failed for "${path}": ${message}`, message, at: where(err, path) };
    }
    if (transpiles.size >= TRANSPILE_CACHE_SIZE) transpiles.delete(transpiles.keys().next().value);
    transpiles.set(key, done);
  }
  return done;
}

// A step or chain hook's module, stripped here rather than in its Worker: the first strip in a
// thread loads the TypeScript parser (a hundred milliseconds or more), which this long-lived
// host pays once. The inline source map names the file by its URL, so that stack frames in the
// Worker point at the user's file and line.
const modules = new Map();

function transpileModule(url, text) {
  const key = createHash('sha256').update(url).update('\0').update(text).digest('hex');
  let code = modules.get(key);
  if (code === undefined) {
    try {
      code = stripTypeScriptTypes(text, { mode: 'transform', sourceMap: true, sourceUrl: url });
    } catch {
      // The Worker strips it again and reports the failure with the file's own loading error.
      code = null;
    }
    if (modules.size >= TRANSPILE_CACHE_SIZE) modules.delete(modules.keys().next().value);
    modules.set(key, code);
  }
  return code;
}

// The position of a type-stripping error: its stack starts "<path>:<line>", then the source
// lines around it, the caret under the offending column.
function where(err, path) {
  const lines = String(err?.stack ?? '').split('\n');
  const m = /:(\d+)$/.exec(lines[0] ?? '');
  if (!m || !lines[0].startsWith(path)) return null;
  const caret = lines.findIndex((l) => /^\s*\^+\s*$/.test(l));
  return {
    line: Number(m[1]),
    column: caret > 0 ? lines[caret].indexOf('^') + 1 : null,
  };
}

// Where the rewrite changed the input: the JSON paths of the values the hook gets altered.
function alteredPaths(before, after, path = '', out = []) {
  if (out.length >= 20) return out;
  if (typeof before !== typeof after || Array.isArray(before) !== Array.isArray(after)) {
    out.push(path);
  } else if (before !== null && typeof before === 'object') {
    for (const key of new Set([...Object.keys(before), ...Object.keys(after ?? {})])) {
      const part = Array.isArray(before) ? key : key.replace(/~/g, '~0').replace(/\//g, '~1');
      alteredPaths(before[key], after?.[key], `${path}/${part}`, out);
    }
  } else if (before !== after) {
    out.push(path);
  }
  return out;
}

function inputWarnings(input, altered) {
  if (altered === input) return [];
  const note =
    "ADF rewrites import and export statements over the whole script, the inline input included, so this value reaches the hook altered";
  let paths;
  try {
    paths = alteredPaths(JSON.parse(input), JSON.parse(altered));
  } catch {
    paths = [''];
  }
  return paths.map((path) => ({ path, message: `${note}` }));
}

// The input is pasted into the script as an object literal, where a "__proto__" key is no key:
// it sets the object's prototype. The hook then inherits that value's members instead of seeing
// the key, and a request it spreads or returns has lost it.
function prototypeKeyWarnings(input) {
  if (!input.includes('"__proto__"')) return [];
  const note =
    'ADF pastes the input into the script as an object literal, where a "__proto__" key sets the object\'s prototype: the hook does not see this key (it inherits its members instead), and a request it spreads or returns has lost it';
  const out = [];
  const visit = (value, path) => {
    if (out.length >= 20 || value === null || typeof value !== 'object') return;
    for (const key of Object.keys(value)) {
      const at = `${path}/${Array.isArray(value) ? key : key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      if (key === '__proto__') out.push({ path: at, message: note });
      visit(value[key], at);
    }
  };
  try {
    visit(JSON.parse(input), '');
  } catch {
    // Input that is not JSON is reported where it is parsed.
  }
  return out;
}

function build(header, input) {
  const { path, fn } = header;
  let code = header.source;
  let map = null;
  if (/\.m?ts$/.test(path)) {
    const done = transpile(path, code);
    if (done.error) return done;
    ({ code, map } = done);
  }
  const inputText = input.toString('utf8');
  const alteredInput = rewrite(inputText);
  const script = rewrite(code);
  const body =
    script +
    `\n;if (typeof ${fn} !== 'function') throw new Error(${JSON.stringify(`Function "${fn}" not found in "${path}".`)});` +
    `\nreturn await ${fn}(${alteredInput});\n`;
  const codeLines = script.split('\n').length;
  const warnings = [...inputWarnings(inputText, alteredInput), ...prototypeKeyWarnings(inputText)];
  return { body, map, codeLines, warnings };
}

// ---- workers ---------------------------------------------------------------------------

// Script-mode (pre-LLM) hooks run on a small pool of long-lived Workers, one call at a time
// each, every call in a fresh vm context the Worker made ahead of it. A Worker is retired
// (terminated, after the reply is sent) when a call on it timed out, was cancelled, hit a limit,
// crashed, threw null, or was lent a built-in module, and after CALLS_PER_WORKER calls, so that
// a Worker's heap (compiled code, caches) does not grow without end. Measured here, a Worker's
// start with its realm frozen, and the end of the one it replaces, take about 100 ms of CPU:
// once in a hundred calls that was about 1 ms of CPU a call, nearly half of all a trivial call
// costs the host; once in a thousand it is about 0.1 ms. Past its first thousand calls, a
// Worker that was never replaced grew the host by about 2 MB per thousand calls more.
// Module-mode hooks run in a Worker each, started ahead as a spare, used once. A contract that
// calls several hooks in a row (a chain's pre and post hooks, an invocation's) uses several
// Workers at once; a call that finds no spare started waits for one, about 40 ms here, where a
// started one answers in a few. So each such call keeps one spare more ready for the next
// burst, up to SPARES_MOST (an idle Worker holds about 10 MB).
const CALLS_PER_WORKER = 1000;
// Pooled Workers kept (busy or idle), and idle ones kept ready for the next call. A call that
// finds none idle gets a new Worker, kept afterwards only while the pool has room.
const POOL_MAX = 4;
const IDLE_MIN = 1;
const SPARES_FIRST = 2;
const SPARES_MOST = 6;
let sparesKept = SPARES_FIRST;
const pool = new Set();
const idle = [];
let spares = [];
// What a reply says of the Worker that made it: these outcomes leave it fit for another call.
const KEPT = new Set(['exception', 'function_missing', 'load_failed', 'invalid_result']);

function heapSizes(memoryBytes) {
  const mb = Math.max(16, Math.floor(memoryBytes / (1 << 20)));
  return { maxOldGenerationSizeMb: mb, maxYoungGenerationSizeMb: Math.min(64, mb) };
}

function newWorker(memoryBytes, pooled) {
  const worker = new Worker(WORKER, {
    resourceLimits: heapSizes(memoryBytes),
    env: {},
    stdout: true,
    stderr: true,
    stdin: false,
    execArgv: ['--no-warnings'],
    workerData: { pooled },
  });
  const entry = { worker, memoryBytes, pooled, broken: false, ready: false, calls: 0, call: null };
  if (pooled) pool.add(entry);
  worker.on('message', (message) => {
    if (message?.type === 'ready') entry.ready = true;
    else entry.call?.onMessage(message);
  });
  worker.on('error', (err) => {
    entry.broken = true;
    pool.delete(entry);
    entry.call?.onError(err);
  });
  worker.on('exit', (code) => {
    entry.broken = true;
    pool.delete(entry);
    holders.delete(entry);
    draining.delete(entry);
    entry.call?.onExit(code);
    idleSampler();
  });
  // Whatever reaches the Worker's own stdout/stderr (not the hook's console) is kept too.
  worker.stdout.on('data', (d) => entry.call?.capture('stdout', d.toString('utf8')));
  worker.stderr.on('data', (d) => entry.call?.capture('stderr', d.toString('utf8')));
  return entry;
}

function retire(entry) {
  entry.broken = true;
  pool.delete(entry);
  if (holders.has(entry)) {
    draining.add(entry);
    sampler ??= setInterval(sample, SAMPLE_MS);
  }
  setImmediate(() => entry.worker.terminate().catch(() => {}));
}

function topUp(memoryBytes, pooled) {
  const list = pooled ? idle : spares;
  const ready = () => list.filter((e) => !e.broken && e.memoryBytes === memoryBytes).length;
  if (pooled) {
    while (ready() < IDLE_MIN && pool.size < POOL_MAX) list.push(newWorker(memoryBytes, true));
  } else {
    while (ready() < sparesKept) list.push(newWorker(memoryBytes, false));
  }
}

function takeWorker(memoryBytes, pooled) {
  const list = pooled ? idle : spares;
  const usable = list.filter((e) => !e.broken && e.memoryBytes === memoryBytes);
  for (const e of list) if (!usable.includes(e)) retire(e);
  // The most recently used ready Worker: its code caches are the warmest.
  let entry = usable.findLast((e) => e.ready) ?? usable[0];
  if (!pooled && !entry?.ready) sparesKept = Math.min(SPARES_MOST, sparesKept + 1);
  if (entry) entry.ahead = true;
  else entry = newWorker(memoryBytes, pooled);
  entry.readyWhenTaken = entry.ready;
  list.splice(0, list.length, ...usable.filter((e) => e !== entry));
  entry.calls += 1;
  setImmediate(() => topUp(memoryBytes, pooled));
  return entry;
}

// After the reply is sent: a Worker fit for more calls waits for the next one.
function release(entry, fit) {
  entry.call = null;
  const keep =
    fit && entry.pooled && !entry.broken && entry.calls < CALLS_PER_WORKER && pool.size <= POOL_MAX;
  if (keep) idle.push(entry);
  else {
    retire(entry);
    if (entry.pooled) setImmediate(() => topUp(entry.memoryBytes, true));
  }
}

// ---- memory ----------------------------------------------------------------------------

// A Worker's resourceLimits bound only its V8 heap. What lives outside it (Buffer and
// ArrayBuffer backing stores, WebAssembly memories, zlib's output) V8 counts as the Worker's
// external memory, and getHeapStatistics() reports both even while the Worker runs a
// synchronous loop: it answers at the Worker's next interrupt check, so only after a single
// allocation in progress has finished. While a call runs, its Worker is sampled every
// SAMPLE_MS. Measured here, touching new memory runs at about 1 to 2 GB/s and a request answers
// in 0.1 to 50 ms (350 ms behind one 256 MB Buffer.alloc), so a call is stopped some tens of
// MB past its limit, or one allocation past it.
const SAMPLE_MS = 10;
// V8 frees dropped ArrayBuffer memory only at a GC, which it starts once external memory has
// grown by 64 MB since the last one: a hook that stays under its limit may, between two GCs,
// show that much more. It is allowed on top of the limit.
const UNCOLLECTED_BYTES = 64 << 20;
// The backstop for what the statistics miss (a Worker that does not answer, native memory of an
// allowed module, such as crypto.scryptSync's): the host's RSS may exceed what it was when the
// calls began by the budgets of the Workers that ran calls since (their limit, young generation
// and uncollected memory), plus this much for Workers starting meanwhile, thread stacks and
// compiled code. Past that, the calls running are stopped.
const BACKSTOP_SLACK_BYTES = 128 << 20;
// A Worker ends at its next interrupt check once terminated; one stuck in a native call (the
// same scryptSync) keeps allocating. Should the host's RSS grow this much past the bound while
// such a Worker has not ended, the host ends itself: nothing else stops that thread.
const STUCK_MARGIN_BYTES = 256 << 20;
const MIB = 1 << 20;
// Calls running, by their Worker: { limit, asking, stop }.
const watched = new Map();
// Workers that ran a call since `floor` was read and have not ended: what each may hold.
const holders = new Map();
// Those of them retired and not yet ended.
const draining = new Set();
let floor = 0;
let sampler = null;

function watch(entry, limit, stop) {
  if (watched.size === 0 && draining.size === 0) {
    floor = process.memoryUsage.rss();
    holders.clear();
  }
  sampler ??= setInterval(sample, SAMPLE_MS);
  watched.set(entry, { limit, asking: false, stop });
  holders.set(entry, limit + UNCOLLECTED_BYTES + heapSizes(limit).maxYoungGenerationSizeMb * MIB);
}

function unwatch(entry) {
  if (watched.delete(entry)) idleSampler();
}

// The sampler runs only while a call runs or a Worker that ran one is ending.
function idleSampler() {
  if (watched.size || draining.size || sampler === null) return;
  clearInterval(sampler);
  sampler = null;
}

function sample() {
  const rss = process.memoryUsage.rss();
  let bound = floor + BACKSTOP_SLACK_BYTES;
  for (const budget of holders.values()) bound += budget;
  if (rss > bound) {
    // While a stopped Worker has not ended, the memory past the bound is taken to be its: the
    // calls running now are not blamed for it, and should it grow on, the host ends itself
    // (the studio runs a call it took down again, on a new host).
    if (draining.size) {
      if (rss > bound + STUCK_MARGIN_BYTES) endHost(rss, bound);
    } else if (watched.size) {
      overHost(rss, bound);
    }
    return;
  }
  for (const [entry, w] of watched) {
    if (w.asking) continue;
    w.asking = true;
    entry.worker.getHeapStatistics().then(
      (stats) => {
        w.asking = false;
        const used = stats.used_heap_size + stats.external_memory;
        if (used > w.limit + UNCOLLECTED_BYTES && watched.get(entry) === w) overWorker(w, used);
      },
      // A Worker not yet running, or ended: the RSS backstop covers it meanwhile.
      () => {
        w.asking = false;
      },
    );
  }
}

// The replies already sent stay sent (stdout is a pipe, written synchronously on Linux); the
// studio sees the host end and starts a new one for the next call.
function endHost(rss, bound) {
  process.stderr.write(
    `hook-studio node host: a retired worker did not end while the host's memory grew to ` +
      `${Math.round(rss / MIB)} MiB, ${Math.round((rss - bound) / MIB)} MiB past its bound; ` +
      'the host ends itself\n',
  );
  // process.exit() would wait for that Worker's thread to end.
  process.kill(process.pid, 'SIGKILL');
}

function overWorker(w, used) {
  w.stop(
    'memory_limit',
    `used ${Math.round(used / MIB)} MiB, more than its memory limit of ` +
      `${Math.round(w.limit / MIB)} MiB allows: the limit counts its worker's JS heap and the ` +
      'memory outside it (Buffers, ArrayBuffers, WebAssembly memories), with ' +
      `${UNCOLLECTED_BYTES / MIB} MiB more for dropped ones not yet collected`,
    { used_bytes: used, limit_bytes: w.limit, uncollected_bytes: UNCOLLECTED_BYTES },
  );
}

function overHost(rss, bound) {
  const running = [...watched.values()];
  const limits = running.map((w) => `${Math.round(w.limit / MIB)} MiB`).join(', ');
  const share =
    running.length === 1
      ? `its memory limit of ${limits} allows`
      : `the ${running.length} calls running allow (limits ${limits}); the memory is ` +
        "the host process's, not attributable to one call, so every call running was stopped";
  for (const w of running) {
    w.stop(
      'memory_limit',
      `ran while the Node host's memory grew to ${Math.round(rss / MIB)} MiB, past the ` +
        `${Math.round(bound / MIB)} MiB that ${share}; this counts memory outside the JS heap ` +
        "that its worker's statistics do not show, such as native allocations",
      { host_rss_bytes: rss, bound_bytes: bound, limit_bytes: w.limit, calls: running.length },
    );
  }
}

// ---- one call --------------------------------------------------------------------------

function startCall(header, input) {
  const started = performance.now();
  const { id, timeout_ms: timeoutMs, output_bytes: outputLimit } = header;
  const out = { stdout: [], stderr: [], sizes: { stdout: 0, stderr: 0 }, truncated: {} };
  let entry = null;
  let hardStop = null;
  let settled = false;
  const moduleMode = header.mode === 'module';
  if (moduleMode) moduleCallsRunning += 1;

  const finish = (reply, body, fit = false) => {
    if (settled) return;
    settled = true;
    clearTimeout(hardStop);
    calls.delete(id);
    if (entry) unwatch(entry);
    send(
      {
        id,
        ...reply,
        stdout: out.stdout.join(''),
        stderr: out.stderr.join(''),
        stdout_truncated: !!out.truncated.stdout,
        stderr_truncated: !!out.truncated.stderr,
        duration_ms: performance.now() - started,
        // Which Worker ran the call: the same number means the same realm.
        worker: entry?.worker.threadId ?? null,
        // Whether that Worker was started before the call came (a spare, or one kept from an
        // earlier call) rather than for it.
        worker_ahead: entry?.ahead === true,
        // Whether it had finished starting by then: the call did not wait for it.
        worker_ready: entry?.readyWhenTaken === true,
        calls: takeCalls(id),
      },
      body,
    );
    if (entry) release(entry, fit);
    if (moduleMode) {
      moduleCallsRunning -= 1;
      endStartedProcesses();
    }
  };
  const stop = (kind, message, details = {}) =>
    finish({ status: 'error', kind, message, details });
  calls.set(id, { stop });

  const built = moduleMode ? { warnings: [] } : build(header, input);
  if (built.error) {
    const at = built.at;
    const code = at ? header.source.split('\n')[at.line - 1]?.trim() || null : null;
    const place = at ? ` at line ${at.line}${at.column ? `, column ${at.column}` : ''}` : '';
    stop('load_failed', `${header.path} has a syntax error${place}: ${built.message}`, {
      frames: at
        ? [{ file: header.path, line: at.line, column: at.column, function: '<script>', code }]
        : [],
      exception: 'SyntaxError',
      adf_message: `could not load "${header.path}" (${built.error})`,
    });
    return;
  }

  const call = {
    id,
    send,
    adf: header.adf,
    capture,
    onMessage,
    onError(err) {
      if (err?.code === 'ERR_WORKER_OUT_OF_MEMORY') {
        const mb = Math.round(header.memory_bytes / (1 << 20));
        stop('memory_limit', `ran out of memory: its worker's heap limit is ${mb} MiB`, {
          adf_message: err.message,
        });
      } else {
        stop('exception', `the worker failed: ${err?.message ?? String(err)}`, {
          adf_message: err?.message ?? String(err),
        });
      }
    },
    onExit(code) {
      stop('worker_crashed', `the worker ended with code ${code} before returning a result`);
    },
  };

  try {
    entry = takeWorker(header.memory_bytes, !moduleMode);
    entry.call = call;
    const file = moduleMode ? resolvePath(process.cwd(), header.path) : null;
    const url = moduleMode ? pathToFileURL(file).href : null;
    entry.worker.postMessage(
      moduleMode
        ? {
            mode: 'module',
            prepared: /\.m?ts$/.test(header.path)
              ? { url, code: transpileModule(url, header.source) }
              : null,
            api: header.api,
            rawResult: header.raw_result === true,
            root: process.cwd(),
            file,
            path: header.path,
            fn: header.fn,
            input: input.toString('utf8'),
            timeoutMs,
            outputLimit,
            resultLimit: header.result_bytes,
          }
        : {
            type: 'call',
            body: built.body,
            map: built.map,
            codeLines: built.codeLines,
            source: header.source,
            path: header.path,
            fn: header.fn,
            timeoutMs,
            outputLimit,
            resultLimit: header.result_bytes,
          },
    );
  } catch (err) {
    stop('engine_failed', `the Node host could not start a worker: ${err?.message ?? err}`);
    return;
  }
  watch(entry, header.memory_bytes, stop);
  // Inside the call a timer fails it at N ms; only terminating the Worker stops a CPU-bound
  // loop, and the reference does that at N + 2000 ms.
  hardStop = setTimeout(
    () =>
      moduleMode
        ? stop(
            'timeout',
            `\`${header.fn}\` did not settle within ${timeoutMs} ms and never yielded, so its ` +
              `worker was terminated at ${timeoutMs + HARD_STOP_GRACE_MS} ms`,
            { stopped_at_ms: timeoutMs + HARD_STOP_GRACE_MS, timeout_ms: timeoutMs },
          )
        : stop(
            'timeout',
            `Execution timed out after ${timeoutMs}ms; the hook never yielded, so its worker was ` +
              `terminated at ${timeoutMs + HARD_STOP_GRACE_MS} ms, as the reference does`,
            {
              stopped_at_ms: timeoutMs + HARD_STOP_GRACE_MS,
              adf_message: `Execution timed out after ${timeoutMs}ms`,
            },
          ),
    timeoutMs + HARD_STOP_GRACE_MS,
  );

  function capture(stream, text) {
    if (out.truncated[stream]) return;
    const size = Buffer.byteLength(text);
    const room = outputLimit - out.sizes[stream];
    if (size > room) {
      out[stream].push(Buffer.from(text).subarray(0, Math.max(0, room)).toString('utf8'));
      out.sizes[stream] = outputLimit;
      out.truncated[stream] = true;
      stop('output_limit', `wrote more than the output limit to its ${stream}`, {
        stream,
        limit_bytes: outputLimit,
      });
      return;
    }
    out[stream].push(text);
    out.sizes[stream] += size;
  }

  function onMessage(message) {
    if (settled) return;
    const fit = !message.retire;
    if (message.type === 'output') capture(message.stream, message.text);
    else if (message.type === 'over') capture(message.stream, message.text);
    else if (message.type === 'adf') {
      answerAdf(call, message)
        .catch((err) => ({ ok: false, code: 'HOST_ERROR', message: String(err?.message ?? err) }))
        .then((reply) => {
          if (!settled) entry.worker.postMessage({ ...reply, type: 'adf_reply', seq: message.seq });
        });
    } else if (message.type === 'result') {
      const reply = {
        status: 'ok',
        warnings: built.warnings,
        refused: message.refused,
        extra: message.extra,
      };
      finish(reply, Buffer.from(message.text, 'utf8'), fit);
    } else if (message.type === 'result_over') {
      stop('output_limit', 'returned a result larger than the result limit', {
        stream: 'result',
        limit_bytes: header.result_bytes,
      });
    } else if (message.type === 'error') {
      const reply = { status: 'error', ...message.error, warnings: built.warnings };
      finish({ ...reply, extra: message.extra }, undefined, fit && KEPT.has(message.error.kind));
    }
  }
}
