"""Pre-LLM hooks share long-lived Workers of the Node host, each call in a fresh vm context: what
one call does must not reach the next on the same Worker. These tests talk to a real host
(node/host.mjs) through NodeHost and read which Worker served each call."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from studio.engine.environment import worker_environment
from studio.engine.node_runtime import NodeHost
from tests.support.workspaces import GENEROUS_TIMEOUT_MS

# Mirrors CALLS_PER_WORKER in node/host.mjs.
CALLS_PER_WORKER = 1000


class Host:
    """A Node host over a folder of hooks, on an event loop of its own."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.loop = asyncio.new_event_loop()
        self.host = NodeHost(root, worker_environment())

    def run(
        self,
        name: str,
        text: str,
        payload: Any = None,
        *,
        timeout_ms: int = GENEROUS_TIMEOUT_MS,
        module: bool = False,
    ) -> tuple[dict[str, Any], Any]:
        """Call ``name``'s ``main`` as ADF runs a pre-LLM hook, or, with ``module``, as a chain
        hook (a module export, in a Worker of its own)."""
        (self.root / name).write_text(text)
        header: dict[str, Any] = {
            "path": name,
            "fn": "main",
            "source": text,
            "timeout_ms": timeout_ms,
            "memory_bytes": 128 << 20,
            "output_bytes": 64 << 10,
            "result_bytes": 1 << 20,
        }
        if module:
            header.update(mode="module", api="chain", raw_result=False)
        body = json.dumps(payload if payload is not None else {"request": {}}).encode()
        answer, result = self.loop.run_until_complete(
            self.host.call(header, body, wait_s=timeout_ms / 1000 + 8)
        )
        value = json.loads(result) if answer["status"] == "ok" else None
        return answer, value

    def close(self) -> None:
        self.loop.run_until_complete(self.host.close())
        self.loop.close()


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    live = Host(tmp_path)
    yield live
    live.close()


TRIVIAL = "function main({ request }) { return request; }\n"

POLLUTES = r"""
function main() {
  const tried = {};
  const attempt = (name, fn) => {
    try {
      tried[name] = String(fn());
    } catch (err) {
      tried[name] = err.name;
    }
  };
  const typedArray = Object.getPrototypeOf(Buffer);
  const typedProto = Object.getPrototypeOf(Buffer.prototype);
  const outerObject = Object.getPrototypeOf(typedProto).constructor;
  const escape = (fn) => fn.constructor.constructor('return process')();
  attempt('buffer_prototype', () => {
    Buffer.prototype.leak = 1;
    return Buffer.prototype.leak;
  });
  attempt('buffer_method', () => {
    Buffer.prototype.toString = () => 'pwned';
    return Buffer.from('a').toString();
  });
  attempt('typed_array', () => ((typedArray.leak = 1), typedArray.leak));
  attempt('typed_array_prototype', () => ((typedProto.leak = 1), typedProto.leak));
  attempt('outer_object_prototype', () => ((outerObject.prototype.leak = 1), 'set'));
  attempt('console_function_prototype', () => {
    console.log.constructor.prototype.leak = 1;
    return console.log.leak;
  });
  attempt('url', () => {
    URL.prototype.toString = () => 'pwned';
    return new URL('http://a/').toString();
  });
  attempt('text_encoder', () => {
    TextEncoder.prototype.encode = () => 'pwned';
    return new TextEncoder().encode('a');
  });
  attempt('adf', () => ((adf.leak = 1), typeof adf.leak));
  attempt('process', () => {
    process.leak = 1;
    process.env.LEAK = '1';
    process.cwd = () => '/pwned';
    return process.cwd();
  });
  attempt('console', () => ((console.log = () => {}), 'set'));
  attempt('global', () => ((globalThis.leak = 1), leak));
  attempt('buffer_function', () => escape(Buffer));
  attempt('buffer_instance_function', () => escape(Buffer.from('a')));
  attempt('this_function', () => escape(this));
  attempt('outer_error_function', () => {
    try {
      Buffer.from(Symbol());
    } catch (err) {
      return escape(err);
    }
  });
  attempt('async_function', () => Buffer.from.constructor.constructor('return 1'));
  setInterval(() => console.log('tick'), 5);
  setTimeout(() => console.log('later'), 30000);
  return { system: JSON.stringify(tried) };
}
"""

INSPECTS = r"""
async function main() {
  const typedProto = Object.getPrototypeOf(Buffer.prototype);
  const seen = {
    buffer_prototype: Buffer.prototype.leak ?? null,
    buffer_method: Buffer.from('a').toString(),
    typed_array: Object.getPrototypeOf(Buffer).leak ?? null,
    typed_array_prototype: typedProto.leak ?? null,
    outer_object_prototype: Object.getPrototypeOf(typedProto).leak ?? null,
    console_function_prototype: console.log.leak ?? null,
    url: new URL('http://a/').toString(),
    text_encoder: Array.from(new TextEncoder().encode('a')),
    adf_then: typeof adf.then,
    adf_awaited: (await adf) === adf,
    process_leak: process.leak ?? null,
    process_env: process.env,
    process_cwd: process.cwd(),
    global_leak: typeof leak,
  };
  console.log('checked');
  return { system: JSON.stringify(seen) };
}
"""


def test_calls_in_a_row_share_a_worker_until_its_call_budget_is_spent(host):
    workers = [host.run("trivial.js", TRIVIAL)[0]["worker"] for _ in range(CALLS_PER_WORKER + 1)]
    assert all(isinstance(w, int) for w in workers)
    assert len(set(workers[:CALLS_PER_WORKER])) == 1
    assert workers[CALLS_PER_WORKER] != workers[0]


def test_what_a_hook_changes_is_not_seen_by_the_next_call_on_its_worker(host):
    polluted, tried = host.run("pollutes.js", POLLUTES)
    assert polluted["status"] == "ok", polluted
    tried = json.loads(tried["system"])
    # Every route to this realm's Function constructor refuses to compile a string.
    for route in (
        "buffer_function",
        "buffer_instance_function",
        "this_function",
        "outer_error_function",
        "async_function",
    ):
        assert tried[route] == "EvalError", (route, tried[route])
    # The lent classes are frozen: assigning to their prototypes is refused or ignored.
    assert tried["buffer_method"] == "TypeError"
    assert tried["buffer_prototype"] == "undefined"
    assert tried["url"] == "TypeError"

    checked, seen = host.run("inspects.js", INSPECTS)
    assert checked["status"] == "ok", checked
    assert checked["worker"] == polluted["worker"]
    assert json.loads(seen["system"]) == {
        "buffer_prototype": None,
        "buffer_method": "a",
        "typed_array": None,
        "typed_array_prototype": None,
        "outer_object_prototype": None,
        "console_function_prototype": None,
        "url": "http://a/",
        "text_encoder": [97],
        "adf_then": "undefined",
        "adf_awaited": True,
        "process_leak": None,
        "process_env": {},
        "process_cwd": "/",
        "global_leak": "undefined",
    }
    # The interval and the timeout the first hook left died with its call.
    assert checked["stdout"] == "checked\n"


def test_no_route_imports_a_module_the_sandbox_refuses(host):
    text = r"""
    async function main() {
      const routes = {
        dynamic: () => import('fs'),
        function: () => Buffer.constructor.constructor('return import("fs")')(),
        require: () => require('fs'),
        sandbox_require: () => __require('fs'),
        module_constructor: async () =>
          (await __require('util')).constructor.constructor('return process')(),
      };
      const out = {};
      for (const [name, route] of Object.entries(routes)) {
        try {
          await route();
          out[name] = 'loaded';
        } catch (err) {
          out[name] = err.name;
        }
      }
      return { system: JSON.stringify(out) };
    }
    """
    answer, value = host.run("imports.js", text)
    assert answer["status"] == "ok", answer
    assert json.loads(value["system"]) == {
        "dynamic": "TypeError",
        "function": "EvalError",
        "require": "Error",
        "sandbox_require": "Error",
        "module_constructor": "EvalError",
    }


def test_inspect_defaults_a_hook_changes_are_set_back(host):
    text = r"""
    function main() {
      const custom = Symbol.for('nodejs.util.inspect.custom');
      const shrink = (depth, options, inspect) => {
        inspect.defaultOptions = { depth: 0 };
        return 'x';
      };
      console.log({ [custom]: shrink });
      return {};
    }
    """
    first, _ = host.run("inspect.js", text)
    assert first["stdout"] == "x\n"
    nested = "function main() { console.log({ a: { b: { c: 1 } } }); return {}; }\n"
    second, _ = host.run("nested.js", nested)
    assert second["worker"] == first["worker"]
    assert second["stdout"] == "{ a: { b: { c: 1 } } }\n"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("function main() { return new Promise(() => {}); }\n", "timeout"),
        ("function main() { throw null; }\n", "timeout"),
        ("async function main() { await __require('crypto'); return {}; }\n", None),
        ("function main() { console.log('x'.repeat(70000)); return {}; }\n", "output_limit"),
    ],
    ids=["timed_out", "threw_null", "lent_a_module", "output_limit"],
)
def test_a_worker_is_retired_after_a_call_that_may_have_spoilt_it(host, text, kind):
    before, _ = host.run("trivial.js", TRIVIAL)
    again, _ = host.run("trivial.js", TRIVIAL)
    assert again["worker"] == before["worker"]
    # Only a call meant to time out gets a short deadline: the others must end by themselves,
    # which on a busy machine can take longer than 300 ms.
    spoilt, _ = host.run(
        "spoils.js", text, timeout_ms=300 if kind == "timeout" else GENEROUS_TIMEOUT_MS
    )
    assert spoilt["worker"] == before["worker"]
    assert spoilt.get("kind") == kind, spoilt
    after, _ = host.run("trivial.js", TRIVIAL)
    assert after["status"] == "ok"
    assert after["worker"] != spoilt["worker"]


def test_a_hook_with_nothing_pending_is_not_held_for_the_drain(host):
    host.run("trivial.js", TRIVIAL)
    durations = sorted(host.run("trivial.js", TRIVIAL)[0]["duration_ms"] for _ in range(9))
    # The reference drains output for 80 ms after every call; with no timer or host call
    # pending, nothing more can be printed, so the call ends without that wait. A drain would
    # hold every call 80 ms at least, so the quickest of them says it: a busy machine can make
    # any call slow, but never one that waits 80 ms quick.
    assert durations[0] < 80


def test_output_a_pending_timer_writes_after_the_function_settles_is_drained_in_order(host):
    text = r"""
    function main() {
      console.log('one');
      setTimeout(() => { console.error('two'); process.stdout.write('three\n'); }, 20);
      Promise.resolve().then(() => console.log('four'));
      return {};
    }
    """
    answer, _ = host.run("late.js", text)
    assert answer["status"] == "ok", answer
    assert answer["stdout"] == "one\nfour\nthree\n"
    assert answer["stderr"] == "[error] two\n"


def test_a_timer_printing_forever_is_cut_at_the_drain_bound(host):
    text = "function main() { setInterval(() => console.log('tick'), 10); return {}; }\n"
    answer, _ = host.run("ticks.js", text)
    assert answer["status"] == "ok", answer
    ticks = answer["stdout"].count("tick\n")
    # Output keeps arriving, so the drain ends at its bound (1 s), not after 80 quiet ms.
    assert 20 <= ticks <= 110
    assert 1000 <= answer["duration_ms"] < 3000


def test_adf_calls_reach_the_host_and_fail_with_a_context_error_and_code(host):
    text = r"""
    async function main() {
      const out = {};
      try {
        await adf.fs_read({ path: 'a' });
      } catch (err) {
        out.code = err.code;
        out.message = err.message;
        out.own_error = err instanceof Error;
      }
      try {
        await adf.fs_read(10n);
      } catch (err) {
        out.not_json = err instanceof TypeError;
      }
      return { system: JSON.stringify(out) };
    }
    """
    answer, value = host.run("adf.js", text)
    assert answer["status"] == "ok", answer
    assert json.loads(value["system"]) == {
        "code": "NOT_FOUND",
        "message": 'Tool "fs_read" is not available',
        "own_error": True,
        "not_json": True,
    }


def test_errors_of_lent_functions_are_the_contexts_own(host):
    text = r"""
    function main() {
      try {
        atob('%');
      } catch (err) {
        return { system: JSON.stringify([err instanceof Error, err.name]) };
      }
    }
    """
    answer, value = host.run("atob.js", text)
    assert answer["status"] == "ok", answer
    assert json.loads(value["system"]) == [True, "InvalidCharacterError"]


def test_small_buffers_share_no_memory_between_calls(host):
    # Code of an ended call that still runs could otherwise write into a later call's Buffers
    # through the slab small Buffers are cut from.
    text = "function main() { return { system: String(Buffer.from('abc').buffer.byteLength) }; }\n"
    answer, value = host.run("slab.js", text)
    assert answer["status"] == "ok", answer
    assert value["system"] == "3"


def test_a_worker_whose_call_was_cancelled_is_retired(host):
    before, _ = host.run("trivial.js", TRIVIAL)
    spin = "function main() { while (true) {} }\n"
    (host.root / "spins.js").write_text(spin)
    header = {
        "path": "spins.js",
        "fn": "main",
        "source": spin,
        "timeout_ms": 5000,
        "memory_bytes": 128 << 20,
        "output_bytes": 64 << 10,
        "result_bytes": 1 << 20,
    }

    async def cancelled() -> None:
        task = asyncio.ensure_future(host.host.call(header, b'{"request": {}}', wait_s=20))
        # The call frame is written before the first await that waits on the host.
        while not host.host._pending:
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    host.loop.run_until_complete(cancelled())
    after, _ = host.run("trivial.js", TRIVIAL)
    assert after["status"] == "ok"
    assert after["worker"] != before["worker"]


def test_code_of_an_ended_call_that_still_runs_reaches_no_later_call(host):
    # Atomics.waitAsync settles its promise on a timer of V8's own, which the call cannot
    # clear: the continuation runs after the call ended, during the next one.
    leaves = r"""
    function main() {
      const cell = new Int32Array(new SharedArrayBuffer(4));
      Atomics.waitAsync(cell, 0, 0, 50).value.then(() => {
        console.log('late');
        globalThis.late = true;
        return Promise.reject(new Error('late rejection'));
      });
      return {};
    }
    """
    first, _ = host.run("leaves.js", leaves)
    assert first["status"] == "ok", first
    waits = r"""
    async function main() {
      await new Promise((resolve) => setTimeout(resolve, 300));
      return { system: typeof late };
    }
    """
    second, value = host.run("waits.js", waits)
    assert second["worker"] == first["worker"]
    assert second["status"] == "ok", second
    assert value == {"system": "undefined"}
    assert second["stdout"] == ""


def test_modules_without_state_are_lent_frozen_and_keep_the_worker(host):
    text = r"""
    import * as path from 'path';
    import url from 'url';
    import qs from 'querystring';
    import punycode from 'punycode';
    import { StringDecoder } from 'string_decoder';
    import { Blob } from 'buffer';
    export async function main() {
      const works = [
        path.join('/a', 'b', '../c'),
        url.parse('http://x.org/p?q=1').pathname,
        new url.URL('http://x.org/y').host,
        url.fileURLToPath('file:///tmp/f'),
        qs.stringify({ a: [1, 2] }),
        punycode.toASCII('mañana.com'),
        new StringDecoder('utf8').write(Buffer.from('é')),
        await new Blob(['blob']).text(),
      ];
      const tried = [];
      for (const change of [
        () => { path.join = () => 'pwned'; },
        () => { path.posix.sep = '#'; },
        () => { url.Url.prototype.format = () => 'pwned'; },
        () => { qs.escape = () => 'pwned'; },
      ]) {
        try {
          change();
          tried.push('ignored');
        } catch (err) {
          tried.push(err.name);
        }
      }
      return { system: JSON.stringify({ works, tried, join: path.join('a', 'b') }) };
    }
    """
    first, value = host.run("modules.ts", text)
    assert first["status"] == "ok", first
    assert json.loads(value["system"]) == {
        "works": [
            "/a/c",
            "/p",
            "x.org",
            "/tmp/f",
            "a=1&a=2",
            "xn--maana-pta.com",
            "é",
            "blob",
        ],
        "tried": ["ignored", "ignored", "TypeError", "ignored"],
        "join": "a/b",
    }
    second, value = host.run("modules.ts", text)
    assert second["worker"] == first["worker"]
    assert json.loads(value["system"])["join"] == "a/b"


def test_a_warmed_host_serves_its_first_call_on_a_worker_started_ahead(tmp_path: Path) -> None:
    cold, warmed = Host(tmp_path / "cold"), Host(tmp_path / "warmed")
    try:
        for live in (cold, warmed):
            live.root.mkdir()
            live.loop.run_until_complete(live.host.start())
        warmed.host.warm(128 << 20)
        first_cold, _ = cold.run("hook.js", TRIVIAL)
        first_warmed, value = warmed.run("hook.js", TRIVIAL)
    finally:
        cold.close()
        warmed.close()
    assert first_cold["worker_ahead"] is False
    assert first_warmed["worker_ahead"] is True
    assert value == {}


MODULE_HOOK = "export function main(input: unknown) {\n  return undefined;\n}\n"


def test_a_burst_of_module_calls_leaves_workers_started_for_the_next_one(host: Host) -> None:
    # A chain calls its hooks one after another, each in a Worker of its own: the host starts
    # two ahead at first, and after a burst of four, enough for the next burst of four.
    host.loop.run_until_complete(host.host.start())
    bursts = []
    for _ in range(20):
        answers = [host.run("chain.ts", MODULE_HOOK, module=True)[0] for _ in range(4)]
        assert all(answer["status"] == "ok" for answer in answers), answers
        bursts.append([answer["worker_ready"] for answer in answers])
        if all(bursts[-1]):
            break
        host.loop.run_until_complete(asyncio.sleep(0.5))
    assert not all(bursts[0])
    assert all(bursts[-1]), bursts
