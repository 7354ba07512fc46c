// The host's side of a pre-LLM hook's `adf.<method>(...)` calls (spec/js-runtime.md §2).
//
// The worker posts {type: 'adf', seq, method, args}; answerAdf applies the reference's rules in
// its order, answers a call that passes them (from the sample's replies, or by running another
// workspace function for sys_lambda), logs it, and resolves with the reply the worker takes:
// {type: 'adf_reply', seq, ok: true, json} or {type: 'adf_reply', seq, ok: false, code, message}.
//
// `call` is {id, adf, send}: the host's id of the call, the `adf` field of its header (what the
// studio resolved from the agent config, the sample and its own settings) and the host's frame
// writer, through which a sys_lambda asks the studio to run the callee.

// Methods the agent's code_execution block switches; a name missing there takes this default.
const CODE_EXECUTION_DEFAULTS = { model_invoke: true, sys_lambda: true, network: false };
// The reference answers these conversation tools only to the model, never to code.
const EXCLUDED = new Set(['say', 'ask', 'loop_compact', 'loop_clear']);
// model_invoke takes a conversation of text and media only.
const MEDIA_BLOCKS = new Set([
  'text', 'image', 'image_url', 'input_audio', 'audio', 'video', 'video_url', 'document', 'file',
]);
// Raw methods hand their string result to the hook as it is.
const RAW = new Set(['model_invoke']);

class CallFailure extends Error {
  constructor(code, message, gate = 'allowed') {
    super(message);
    this.code = code;
    this.gate = gate;
  }
}

// ---- per run state: the log and which listed replies were used -----------------------------

// By the id of the outermost call: nested sys_lambda calls log into their root's run.
const runs = new Map();
// A hook may call in a loop until its timeout: past these the calls are still answered, only
// counted, so that the log cannot outgrow the studio.
const LOGGED_CALLS = 10_000;
const LOGGED_BYTES = 16 << 20;

function runOf(call) {
  const root = call.adf?.root ?? call.id;
  let run = runs.get(root);
  if (run === undefined) {
    run = { log: [], used: new Map(), bytes: 0, dropped: 0 };
    // A nested call whose root already ended keeps its log to itself and drops it.
    if (root === call.id) runs.set(root, run);
  }
  return run;
}

/** The calls a finished call made (its nested calls' too), in order, and how many more were
 * made past the log's bounds; forgets them. */
export function takeCalls(id) {
  const run = runs.get(id);
  runs.delete(id);
  if (!run) return { log: [], dropped: 0 };
  const now = performance.now();
  for (const entry of run.log) {
    const started = unanswered.get(entry);
    if (started === undefined) continue;
    entry.duration_ms = now - started;
    entry.error = {
      code: 'UNANSWERED',
      message: 'the hook ended before this call was answered (studio only: the code is the ' +
        "studio's, ADF reports nothing for it)",
    };
  }
  return { log: run.log, dropped: run.dropped };
}

// Entries still waiting for their answer, with when they began.
const unanswered = new WeakMap();

// ---- the studio, for callees it runs ----------------------------------------------------------

const asked = new Map();
let asks = 0;

function askStudio(call, header, body) {
  const ask = `a${++asks}`;
  return new Promise((resolve) => {
    asked.set(ask, resolve);
    try {
      call.send({ ...header, ask, call: call.id }, Buffer.from(body, 'utf8'));
    } catch (err) {
      asked.delete(ask);
      resolve({ header: { ok: false, message: `the studio could not be asked: ${err?.message ?? err}` }, body: '' });
    }
  });
}

/** The studio's answer to one of our questions (a frame with op "answer"). */
export function studioAnswered(header, body) {
  const resolve = asked.get(header.ask);
  asked.delete(header.ask);
  resolve?.({ header, body: body.toString('utf8') });
}

// ---- the rules ------------------------------------------------------------------------------

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

function switchedOn(adf, name) {
  const value = adf.code_execution?.[name];
  return typeof value === 'boolean' ? value : CODE_EXECUTION_DEFAULTS[name] ?? false;
}

function isCodeExecutionMethod(adf, name) {
  return (
    Object.hasOwn(CODE_EXECUTION_DEFAULTS, name) ||
    typeof adf.code_execution?.[name] === 'boolean'
  );
}

/** What the reference's worker checks before the call leaves it. */
export function workerGate(adf, method) {
  const tool = Object.hasOwn(adf.tools ?? {}, method) ? adf.tools[method] : null;
  if (method !== 'model_invoke' && method !== 'sys_lambda') {
    const enabled =
      (tool && (tool.enabled || tool.restricted)) ||
      (isCodeExecutionMethod(adf, method) && switchedOn(adf, method));
    if (!enabled) {
      throw new CallFailure('NOT_FOUND', `Tool "${method}" is not available`, 'enabled_tools');
    }
  }
  if (tool?.restricted && !adf.authorized) {
    throw new CallFailure(
      'REQUIRES_AUTHORIZED_CODE',
      `Tool "${method}" is restricted: only authorized code may call it`,
      'authorization',
    );
  }
}

/** What the reference's host checks, in its order, before it answers. */
export function hostGate(adf, method, args) {
  const restricted = adf.restricted_methods ?? ['attestation_issue'];
  if (restricted.includes(method) && !adf.authorized) {
    throw new CallFailure(
      'REQUIRES_AUTHORIZED_CODE',
      `"${method}" is a restricted method (code_execution.restricted_methods): only authorized code may call it`,
      'authorization',
    );
  }
  if (isCodeExecutionMethod(adf, method)) {
    if (!switchedOn(adf, method)) {
      throw new CallFailure(
        'DISABLED',
        `"${method}" is switched off (code_execution.${method} is false)`,
        `code_execution.${method}`,
      );
    }
    if (method === 'model_invoke') checkConversation(args);
    return;
  }
  if (EXCLUDED.has(method)) {
    throw new CallFailure(
      'EXCLUDED_TOOL',
      `Tool "${method}" cannot be called from code`,
      'excluded',
    );
  }
  const tool = Object.hasOwn(adf.tools ?? {}, method) ? adf.tools[method] : null;
  if (!tool) {
    throw new CallFailure('NOT_FOUND', `Tool "${method}" is not declared in the agent config`, 'declared_tools');
  }
  if (!tool.enabled && !tool.restricted) {
    throw new CallFailure('DISABLED', `Tool "${method}" is disabled`, 'declared_tools');
  }
  if (tool.restricted && !adf.authorized) {
    throw new CallFailure(
      'REQUIRES_AUTHORIZED_CODE',
      `Tool "${method}" is restricted: only authorized code may call it`,
      'authorization',
    );
  }
}

function checkConversation(args) {
  const messages = isObject(args) ? args.messages : undefined;
  if (messages === undefined) return;
  if (!Array.isArray(messages)) {
    throw new CallFailure('INVALID_INPUT', 'model_invoke: messages must be an array', 'input');
  }
  messages.forEach((message, i) => {
    const content = isObject(message) ? message.content : undefined;
    if (!Array.isArray(content)) return;
    content.forEach((block, j) => {
      const type = isObject(block) ? block.type : undefined;
      if (!MEDIA_BLOCKS.has(type)) {
        throw new CallFailure(
          'INVALID_INPUT',
          `model_invoke: messages[${i}].content[${j}] is a ${JSON.stringify(type ?? null)} block; ` +
            'model_invoke takes only text and media blocks (no tool_use or tool_result)',
          'input',
        );
      }
    });
  });
}

// ---- answers from the sample ----------------------------------------------------------------

function sameJson(a, b) {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && sameJson(a[k], b[k]));
}

const pointerPart = (name) => name.replace(/~/g, '~0').replace(/\//g, '~1');

function fromSample(adf, run, method, args) {
  const declared = Object.hasOwn(adf.replies ?? {}, method) ? adf.replies[method] : undefined;
  const fits = (reply) => !Object.hasOwn(reply, 'args') || sameJson(reply.args, args);
  let reply;
  let where;
  if (Array.isArray(declared)) {
    const used = run.used.get(method) ?? new Set();
    run.used.set(method, used);
    const index = declared.findIndex((r, i) => !used.has(i) && fits(r));
    if (index >= 0) {
      used.add(index);
      reply = declared[index];
      where = `sample /adf/replies/${pointerPart(method)}/${index}`;
    }
  } else if (isObject(declared) && fits(declared)) {
    reply = declared;
    where = `sample /adf/replies/${pointerPart(method)}`;
  }
  if (reply === undefined) {
    const why =
      declared === undefined
        ? 'the sample declares no reply for it'
        : Array.isArray(declared)
          ? 'every reply the sample lists for it is used or expects other arguments'
          : 'the reply the sample declares for it expects other arguments';
    throw new CallFailure(
      'NO_REPLY',
      `adf.${method}: ${why} (studio only: ADF would call the real ${method}); declare one in ` +
        `the sample as "adf": {"replies": {"${method}": {"result": ...}}}, a list of replies ` +
        'to answer calls in turn, "args" to answer only calls with those arguments',
    );
  }
  if (reply.error !== undefined) {
    throw Object.assign(new CallFailure(reply.error.code, reply.error.message), { answeredBy: where });
  }
  let value = reply.result ?? null;
  if (typeof value === 'string' && !RAW.has(method)) {
    try {
      value = JSON.parse(value);
    } catch {
      // Text that is not JSON reaches the hook as text.
    }
  }
  return { value, answeredBy: where };
}

// ---- sys_lambda -----------------------------------------------------------------------------

// One caller's nested calls run one after another: a hook that starts a thousand at once gets
// them answered in turn instead of a thousand Workers. Callees have lanes of their own, so a
// nested call that calls again never waits on its caller.
const lanes = new Map();
// Every level of a chain of nested calls holds a Worker while it waits.
const NESTED_DEPTH = 32;

function inLane(id, task) {
  const previous = lanes.get(id) ?? Promise.resolve();
  const done = previous.then(task);
  const tail = done.catch(() => {});
  lanes.set(id, tail);
  tail.then(() => {
    if (lanes.get(id) === tail) lanes.delete(id);
  });
  return done;
}

function sourcePath(source) {
  // path[:fn], where the function name is an identifier after the last colon.
  const m = /^(.*?)(?::([A-Za-z_$][\w$]*))?$/.exec(source.trim());
  return m[1] ? { path: m[1], fn: m[2] ?? 'main' } : { path: source.trim(), fn: 'main' };
}

async function sysLambda(call, args) {
  const adf = call.adf;
  if (!isObject(args) || typeof args.source !== 'string' || !args.source.trim()) {
    throw new CallFailure('INVALID_INPUT', 'sys_lambda needs {source: "path[:function]", args}', 'input');
  }
  const target = sourcePath(args.source);
  const key = `${target.path}:${target.fn}`;
  const authorized = (adf.authorized_sources ?? []).includes(target.path);
  if (authorized && !adf.authorized) {
    throw new CallFailure(
      'REQUIRES_AUTHORIZED_CALLER',
      `sys_lambda: "${target.path}" is authorized code, which unauthorized code may not call`,
      'authorization',
    );
  }
  const chain = adf.chain ?? [];
  if (chain.includes(key)) {
    throw new CallFailure(
      'CIRCULAR_CALL',
      `sys_lambda: circular call ${[...chain, key].join(' -> ')}`,
      'circular',
    );
  }
  if ((adf.depth ?? 0) + 1 > NESTED_DEPTH) {
    throw new CallFailure(
      'DEPTH_LIMIT',
      `sys_lambda: ${key} would be the ${NESTED_DEPTH + 1}th nested call in a row; the studio ` +
        `stops at ${NESTED_DEPTH} so that a chain of functions cannot hold a Worker each without ` +
        'end (studio only: ADF has no such limit)',
      'depth',
    );
  }
  const child = {
    ...adf,
    authorized,
    source: key,
    chain: [...chain, key],
    depth: (adf.depth ?? 0) + 1,
    root: adf.root ?? call.id,
  };
  let argsText;
  try {
    argsText = JSON.stringify(args.args ?? {});
  } catch (err) {
    throw new CallFailure('INVALID_INPUT', `sys_lambda: args are not JSON: ${err?.message ?? err}`, 'input');
  }
  const { header, body } = await inLane(call.id, () =>
    askStudio(call, { op: 'sys_lambda', path: target.path, fn: target.fn, adf: child }, argsText),
  );
  logCalleeCalls(call, header.calls, child.depth);
  if (!header.ok) {
    throw Object.assign(new CallFailure('FN_ERROR', `sys_lambda ${key}: ${header.message}`), {
      answeredBy: key,
      output: header.output ?? '',
    });
  }
  let value = JSON.parse(body);
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      // Text that is not JSON reaches the caller as text.
    }
  }
  const output = header.output ?? '';
  if (!output) return { value, answeredBy: key, output };
  // The reference's quirk: a callee that printed anything hands its caller text, not a value.
  const shown = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  return { value: `${shown}\n\nOutput:\n${output.replace(/\n$/, '')}`, answeredBy: key, output };
}

// The calls a Python callee made itself, which the studio reports with its answer, go in the
// caller's log after the sys_lambda that made them; a JavaScript callee's are logged as made.
function logCalleeCalls(call, entries, depth) {
  if (!Array.isArray(entries)) return;
  const run = runOf(call);
  for (const entry of entries) {
    if (run.log.length >= LOGGED_CALLS || run.bytes >= LOGGED_BYTES) {
      run.dropped += 1;
      continue;
    }
    run.log.push({ ...entry, depth: depth + (Number(entry?.depth) || 0) });
    run.bytes += JSON.stringify(entry)?.length ?? 0;
  }
}

// ---- one call -------------------------------------------------------------------------------

export async function answerAdf(call, message) {
  const started = performance.now();
  const adf = call.adf ?? {};
  const { seq, method } = message;
  const args = message.args;
  const run = runOf(call);
  const entry = {
    method,
    args: args ?? null,
    gate: 'allowed',
    answered_by: null,
    reply: null,
    error: null,
    output: '',
    depth: adf.depth ?? 0,
    duration_ms: 0,
  };
  const logged = run.log.length < LOGGED_CALLS && run.bytes < LOGGED_BYTES;
  if (logged) run.log.push(entry);
  else run.dropped += 1;
  unanswered.set(entry, started);
  try {
    workerGate(adf, method);
    hostGate(adf, method, args);
    const answer =
      method === 'sys_lambda' ? await sysLambda(call, args) : fromSample(adf, run, method, args);
    entry.answered_by = answer.answeredBy;
    entry.reply = answer.value ?? null;
    entry.output = answer.output ?? '';
    return { type: 'adf_reply', seq, ok: true, json: JSON.stringify(answer.value ?? null) };
  } catch (err) {
    const code = err instanceof CallFailure ? err.code : 'HOST_ERROR';
    const text = String(err?.message ?? err);
    entry.gate = err?.gate ?? 'allowed';
    entry.answered_by = err?.answeredBy ?? null;
    entry.output = err?.output ?? '';
    entry.error = { code: String(code), message: text };
    return { type: 'adf_reply', seq, ok: false, code: String(code), message: text };
  } finally {
    unanswered.delete(entry);
    entry.duration_ms = performance.now() - started;
    if (logged) {
      run.bytes += (JSON.stringify(entry.args)?.length ?? 0) + (JSON.stringify(entry.reply)?.length ?? 0);
      run.bytes += entry.output.length + (entry.error?.message.length ?? 0);
    }
  }
}
