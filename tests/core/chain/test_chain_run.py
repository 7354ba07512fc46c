"""Chain orchestration (spec/pleach.md §3, §5), with simple async callables standing in for the
worker transport: ordering, output-to-input, suffixes, escapes, retries and failing closed."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from studio.core.chain import builtins as chain_builtins
from studio.core.chain.config import (
    DEFAULT_HOOK_TIMEOUT_MS,
    ChainConfig,
    ChainHookRef,
    parse_chain_config,
    validate_chain_config,
)
from studio.core.chain.run import (
    CHAIN_STUDIO_RULES,
    ChainRunResult,
    run_chain,
)
from studio.core.chain.sample import (
    ChainSample,
    parse_chain_sample,
    validate_chain_sample,
)
from studio.core.chain.shapes import STUDIO_RULE_IDS
from studio.core.contract import HookReply
from studio.core.findings import Finding, errors, warnings
from studio.core.turn_error import turn_error

# --------------------------------------------------------------------------------------------
# Helpers

Hook = Callable[[dict[str, Any]], Any]


def answer(content: str = "done") -> dict[str, Any]:
    return {"role": "assistant", "content": content}


def calling(*names: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "toolCalls": [{"name": name, "id": f"{name}{i}"} for i, name in enumerate(names)],
    }


def sample_json(responses: list[Any] | None = None, **context: Any) -> dict[str, Any]:
    base = {
        "messages": [{"role": "user", "content": "hello"}],
        "model": "small",
        "modelProfile": None,
        "tools": [{"name": "search"}],
        "systemPrompt": "You help.",
        "state": {"user": "u1"},
    }
    base.update(context)
    return {
        "contract": "chain",
        "context": base,
        "responses": responses if responses is not None else [answer()],
    }


def sample(responses: list[Any] | None = None, **context: Any) -> ChainSample:
    parsed = parse_chain_sample(sample_json(responses, **context))
    assert isinstance(parsed, ChainSample), parsed
    return parsed


def config(
    pre: list[Any] = (), post: list[Any] = (), defaults: bool = False, **extra: Any
) -> ChainConfig:
    parsed = parse_chain_config(
        {"pre": list(pre), "post": list(post), "default_post_validators": defaults, **extra}
    )
    assert isinstance(parsed, ChainConfig), parsed
    return parsed


def src(name: str, **extra: Any) -> dict[str, Any]:
    return {"source": f"lib/hooks.py:{name}", **extra}


class Transport:
    """Stands in for the engine: runs ``lib/hooks.py:<name>`` as ``hooks[name](context)``.

    A hook may be sync or async; an exception it raises comes back as the engine would send it,
    an ``exception`` turn error. Every call is logged with the context it received.
    """

    def __init__(self, **hooks: Hook) -> None:
        self.hooks = hooks
        self.calls: list[tuple[str, str, int, dict[str, Any]]] = []

    async def __call__(
        self, hook: ChainHookRef, context: dict[str, Any], position: int, chain: str
    ) -> HookReply:
        ref = hook.source_ref
        assert ref is not None and hook.builtin is None
        self.calls.append((ref.function, chain, position, copy.deepcopy(context)))
        function = self.hooks[ref.function]
        try:
            value = function(context)
            if isinstance(value, Awaitable):
                value = await value
        except Exception as exc:
            return HookReply(
                error=turn_error("exception", f"{type(exc).__name__}: {exc}", duration_ms=1.5),
                stderr="Traceback ...\nValueError: bad\n",
                duration_ms=1.5,
            )
        return HookReply(value=value, stdout=f"ran {ref.function}\n", duration_ms=2.0)

    def names(self) -> list[str]:
        return [name for name, *_ in self.calls]


def run(
    s: ChainSample, c: ChainConfig, transport: Callable[..., Awaitable[HookReply]] | None = None
) -> ChainRunResult:
    return asyncio.run(run_chain(s, c, transport or Transport()))


def stops(result: ChainRunResult) -> list[tuple[str, int, int, str | None]]:
    return [(step.chain, step.position, step.attempt, step.stopped) for step in result.timeline]


def const(value: Any) -> Hook:
    return lambda context: value


# --------------------------------------------------------------------------------------------
# Ordering and composition


def test_pre_hooks_run_in_order_each_seeing_the_previous_output() -> None:
    transport = Transport(
        a=const({"messages": [{"role": "user", "content": "rewritten"}]}),
        b=lambda ctx: {"model": ctx["messages"][0]["content"] + "-model"},
        c=lambda ctx: {"tools": [{"name": ctx["model"]}]},
        d=const(None),
    )
    result = run(sample(), config(pre=[src("a"), src("b"), src("c"), src("d")]), transport)
    assert transport.names() == ["a", "b", "c", "d"]
    assert [pos for _, chain, pos, _ in transport.calls] == [0, 1, 2, 3]
    assert transport.calls[1][3]["messages"] == [{"role": "user", "content": "rewritten"}]
    assert transport.calls[3][3]["tools"] == [{"name": "rewritten-model"}]
    assert result.status == "ok"
    assert result.request == {
        "messages": [{"role": "user", "content": "rewritten"}],
        "model": "rewritten-model",
        "tools": [{"name": "rewritten-model"}],
        "systemPrompt": "You help.",
    }
    assert [step.changed for step in result.timeline] == [["messages"], ["model"], ["tools"], []]
    assert [step.hook for step in result.timeline] == [
        "lib/hooks.py:a",
        "lib/hooks.py:b",
        "lib/hooks.py:c",
        "lib/hooks.py:d",
    ]
    assert result.model_calls[0].messages == [{"role": "user", "content": "rewritten"}]


def test_every_hook_sees_the_sample_state_and_profile() -> None:
    transport = Transport(a=const(None), p=const(None))
    run(sample(modelProfile=None), config(pre=[src("a")], post=[src("p")]), transport)
    pre_context, post_context = transport.calls[0][3], transport.calls[1][3]
    assert pre_context["state"] == {"user": "u1"}
    assert pre_context["modelProfile"] is None
    assert post_context["state"] == {"user": "u1"}
    assert post_context["request"]["state"] == {"user": "u1"}
    assert set(post_context) == {"response", "request", "state"}
    assert set(post_context["request"]) == {"messages", "model", "tools", "state"}


def test_a_result_equal_to_the_input_changes_nothing_and_null_keys_are_omitted() -> None:
    transport = Transport(
        same=lambda ctx: {"messages": ctx["messages"], "model": ctx["model"]},
        nulls=const({"messages": None, "model": None, "shortCircuit": None}),
    )
    result = run(sample(), config(pre=[src("same"), src("nulls")]), transport)
    assert [step.changed for step in result.timeline] == [[], []]
    assert [step.stopped for step in result.timeline] == [None, None]
    assert result.request is not None and result.request["model"] == "small"


def test_system_prompt_suffixes_accumulate_with_a_blank_line() -> None:
    transport = Transport(
        a=const({"systemPromptSuffix": "Be brief."}),
        b=const({"systemPromptSuffix": "\nCite sources.\n"}),
        c=const({"systemPromptSuffix": "  "}),
        d=const(None),
    )
    hooks = config(pre=[src("a"), src("b"), src("c"), src("d")])
    result = run(sample(), hooks, transport)
    assert result.request is not None
    assert result.request["systemPrompt"] == "You help.\n\nBe brief.\n\nCite sources.\n"
    # Each hook sees the prompt with the earlier suffixes already applied.
    assert transport.calls[1][3]["systemPrompt"] == "You help.\n\nBe brief."
    assert [step.changed for step in result.timeline] == [
        ["systemPrompt"],
        ["systemPrompt"],
        [],
        [],
    ]


def test_builtin_pre_hooks_run_in_process_in_the_chain() -> None:
    many = [{"name": f"t{i}"} for i in range(40)]
    transport = Transport(see=const(None))
    hooks = config(pre=["lazyModelDefaultsHook", src("see")])
    result = run(sample(tools=many), hooks, transport)
    assert transport.calls[0][3]["tools"] == many[:32]
    first = result.timeline[0]
    assert (first.hook, first.builtin, first.changed) == ("lazyModelDefaultsHook", True, ["tools"])
    assert first.returned == {"tools": many[:32]}


def test_the_history_trimmer_trims_what_the_post_chain_sees_as_the_request() -> None:
    messages = [{"role": "user", "content": f"m{i}:" + "x" * 32} for i in range(20)]
    profile = {
        "maxInputTokens": 200,
        "maxOutputTokens": 10,
        "costPerMillionInputTokens": 0,
        "costPerMillionOutputTokens": 0,
        "supportsParallelToolCalls": True,
        "supportsVision": False,
        "supportsCaching": False,
    }
    transport = Transport(check=const(None))
    s = sample(messages=messages, modelProfile=profile)
    result = run(s, config(pre=["historyTrimmerHook"], post=[src("check")]), transport)
    assert transport.calls[0][3]["request"]["messages"] == messages[6:]
    assert result.request is not None and result.request["messages"] == messages[6:]


def test_hooks_cannot_reach_the_runs_own_data_by_mutating_their_input() -> None:
    def vandal(ctx: dict[str, Any]) -> None:
        ctx["messages"].clear()
        ctx["state"]["user"] = "evil"

    transport = Transport(v=vandal, see=const(None))
    s = sample()
    before = copy.deepcopy(s.context)
    result = run(s, config(pre=[src("v"), src("see")]), transport)
    assert transport.calls[1][3]["messages"] == [{"role": "user", "content": "hello"}]
    assert transport.calls[1][3]["state"] == {"user": "u1"}
    assert s.context == before
    assert result.status == "ok"


def test_steps_carry_the_workers_output_and_duration() -> None:
    transport = Transport(a=const(None))
    result = run(sample(), config(pre=[src("a")]), transport)
    step = result.timeline[0]
    assert (step.stdout, step.stderr, step.duration_ms, step.builtin) == ("ran a\n", "", 2.0, False)


# --------------------------------------------------------------------------------------------
# Escapes


def test_short_circuit_skips_later_pre_hooks_the_model_and_the_post_chain() -> None:
    canned = {"role": "assistant", "content": "cached answer"}
    transport = Transport(
        a=const({"model": "big", "shortCircuit": canned}), b=const(None), p=const(None)
    )
    hooks = config(pre=[src("a"), src("b")], post=[src("p")], defaults=True)
    result = run(sample(responses=[]), hooks, transport)
    assert transport.names() == ["a"]
    assert result.status == "short_circuited"
    assert result.response == canned
    assert result.model_calls == []
    assert stops(result) == [("pre", 0, 0, "shortCircuit")]
    assert result.timeline[0].changed == ["model"]
    assert result.request is not None and result.request["model"] == "big"


def test_a_pre_interrupt_stops_everything() -> None:
    transport = Transport(a=const({"interrupt": {"reason": "needs approval", "value": {"n": 1}}}))
    hooks = config(pre=[src("a"), "lazyModelDefaultsHook"], defaults=True)
    result = run(sample(), hooks, transport)
    assert result.status == "interrupted"
    assert result.interrupt == {"reason": "needs approval", "value": {"n": 1}}
    assert result.response is None
    assert result.model_calls == []
    assert stops(result) == [("pre", 0, 0, "interrupt")]


def test_a_result_with_two_escapes_takes_the_first_one() -> None:
    # studio rule single-escape: shortCircuit over interrupt, retry over interrupt.
    both = {"shortCircuit": answer("canned"), "interrupt": {"reason": "r"}}
    result = run(sample(), config(pre=[src("both")]), Transport(both=const(both)))
    assert (result.status, result.response, result.interrupt) == (
        "short_circuited",
        answer("canned"),
        None,
    )
    both = {"retry": {"feedback": "f"}, "interrupt": {"reason": "r"}}
    transport = Transport(both=const(both))
    result = run(sample([answer("1"), answer("2")]), config(post=[src("both")]), transport)
    assert stops(result) == [("post", 0, 0, "retry"), ("post", 0, 1, "retry_exhausted")]
    assert result.interrupt is None


def test_a_post_interrupt_stops_the_post_chain() -> None:
    transport = Transport(
        fix=const({"response": answer("patched")}),
        stop=const({"interrupt": {"reason": "review"}}),
        never=const(None),
    )
    hooks = config(post=[src("fix"), src("stop"), src("never")], defaults=True)
    result = run(sample(), hooks, transport)
    assert transport.names() == ["fix", "stop"]
    assert result.status == "interrupted"
    assert result.interrupt == {"reason": "review", "value": None}
    assert result.response == answer("patched")
    assert stops(result) == [("post", 0, 0, None), ("post", 1, 0, "interrupt")]
    assert result.timeline[0].changed == ["response"]


def test_post_hooks_compose_the_response() -> None:
    transport = Transport(
        a=lambda ctx: {"response": answer(ctx["response"]["content"] + "+a")},
        b=lambda ctx: {"response": answer(ctx["response"]["content"] + "+b")},
    )
    result = run(sample([answer("r")]), config(post=[src("a"), src("b")]), transport)
    assert result.response == answer("r+a+b")
    assert result.model_calls[0].response == answer("r")


# --------------------------------------------------------------------------------------------
# Retries


def test_retry_reruns_the_model_and_the_whole_post_chain_with_feedback() -> None:
    def picky(ctx: dict[str, Any]) -> Any:
        if ctx["response"]["content"] == "bad":
            return {"retry": {"feedback": "Try again, properly."}}
        return None

    transport = Transport(first=const(None), picky=picky, last=const(None))
    hooks = config(post=[src("first"), src("picky"), src("last")])
    result = run(sample([answer("bad"), answer("good")]), hooks, transport)
    assert transport.names() == ["first", "picky", "first", "picky", "last"]
    assert stops(result) == [
        ("post", 0, 0, None),
        ("post", 1, 0, "retry"),
        ("post", 0, 1, None),
        ("post", 1, 1, None),
        ("post", 2, 1, None),
    ]
    assert result.status == "ok"
    assert result.response == answer("good")
    assert result.retries == 1 and not result.retry_exhausted
    feedback = {"role": "user", "content": "Try again, properly."}
    assert [call.response_index for call in result.model_calls] == [0, 1]
    assert result.model_calls[1].feedback == "Try again, properly."
    assert result.model_calls[1].messages == [{"role": "user", "content": "hello"}, feedback]
    assert transport.calls[2][3]["request"]["messages"][-1] == feedback
    assert result.request is not None and result.request["messages"][-1] == feedback


def test_the_pre_chain_does_not_run_again_on_retry() -> None:
    transport = Transport(pre=const(None), again=const({"retry": {"feedback": "f"}}))
    result = run(
        sample([answer("1"), answer("2")]), config([src("pre")], [src("again")]), transport
    )
    assert transport.names() == ["pre", "again", "again"]
    assert result.retry_exhausted


def test_an_exhausted_budget_lets_the_last_response_stand_and_is_marked() -> None:
    transport = Transport(
        always=lambda ctx: {
            "response": answer(ctx["response"]["content"] + "!"),
            "retry": {"feedback": "no"},
        },
        never=const(None),
    )
    s = sample([answer("one"), answer("two"), answer("three")])
    result = run(s, config(post=[src("always"), src("never")]), transport)
    assert transport.names() == ["always", "always"]
    assert result.status == "ok"
    assert result.retry_exhausted
    assert result.retries == 1
    assert len(result.model_calls) == 2
    assert result.response == answer("two!")
    assert stops(result) == [("post", 0, 0, "retry"), ("post", 0, 1, "retry_exhausted")]
    # Feedback accumulates only for granted retries.
    assert result.request is not None
    assert [m["content"] for m in result.request["messages"]] == ["hello", "no"]


def test_max_retries_raises_the_budget() -> None:
    transport = Transport(always=const({"retry": {"feedback": "more", "maxRetries": 2}}))
    s = sample([answer("1"), answer("2"), answer("3"), answer("4")])
    result = run(s, config(post=[src("always")]), transport)
    assert result.retries == 2
    assert result.retry_exhausted
    assert result.response == answer("3")
    assert [step.attempt for step in result.timeline] == [0, 1, 2]
    assert [m["content"] for m in result.model_calls[2].messages] == ["hello", "more", "more"]


def test_the_budget_is_counted_per_turn_across_hooks() -> None:
    # toolCallValidatorHook spends the one retry; repetitionDetectorHook's request is refused.
    history = [
        {"role": "user", "content": "find"},
        calling("search"),
        {"role": "tool", "content": "r", "toolCallId": "search0"},
        calling("search"),
        {"role": "tool", "content": "r", "toolCallId": "search0"},
    ]
    s = sample([calling("serch"), calling("search"), answer()], messages=history)
    result = run(s, config(defaults=True))
    assert stops(result) == [
        ("post", 0, 0, "retry"),
        ("post", 0, 1, None),
        ("post", 1, 1, "retry_exhausted"),
    ]
    assert [step.hook for step in result.timeline] == [
        "toolCallValidatorHook",
        "toolCallValidatorHook",
        "repetitionDetectorHook",
    ]
    assert result.response == calling("search")
    assert result.retry_exhausted and result.retries == 1


def test_running_out_of_responses_is_a_sample_error() -> None:
    transport = Transport(again=const({"retry": {"feedback": "f", "maxRetries": 5}}))
    result = run(sample([answer()]), config(post=[src("again")]), transport)
    assert result.status == "turn_error"
    error = result.turn_error
    assert error is not None
    assert (error.kind, error.reason, error.path) == ("sample_invalid", "callback", "/responses")
    assert "ran out of scripted responses" in error.message
    assert "retry 1 needs response 2" in error.message
    assert error.details == {"model_calls": 2, "responses": 1}
    assert result.request is None and result.response is None
    assert len(result.model_calls) == 1
    assert stops(result) == [("post", 0, 0, "retry")]


def test_no_responses_at_all_fails_at_the_first_model_call() -> None:
    parsed = parse_chain_sample(sample_json(responses=[]))
    assert isinstance(parsed, ChainSample)
    assert [f.path for f in parsed.warnings] == [("responses",)]
    result = run(parsed, config())
    assert result.turn_error is not None
    assert "the first model call needs response 1" in result.turn_error.message


# --------------------------------------------------------------------------------------------
# Failing closed


def test_a_wrong_shape_fails_the_turn_with_the_hook_its_position_and_the_path() -> None:
    transport = Transport(ok=const(None), bad=const({"retry": {"feedback": "x", "maxRetries": 0}}))
    result = run(sample(), config(post=[src("ok"), src("bad")], defaults=True), transport)
    assert result.status == "turn_error"
    error = result.turn_error
    assert error is not None
    assert (error.kind, error.reason, error.path) == (
        "invalid_result",
        "callback",
        "/retry/maxRetries",
    )
    assert error.hook is not None
    assert (error.hook.source, error.hook.function, error.hook.contract) == (
        "lib/hooks.py",
        "bad",
        "chain",
    )
    assert (error.hook.chain, error.hook.position) == ("post", 1)
    assert error.message.startswith("lib/hooks.py:bad at post[1] returned an invalid result: ")
    assert "retry.maxRetries" in error.message
    assert error.details["findings"][0]["path"] == "/retry/maxRetries"
    assert result.request is None and result.response is None
    last = result.timeline[-1]
    assert (last.position, last.stopped) == (1, "turn_error")
    assert last.returned == {"retry": {"feedback": "x", "maxRetries": 0}}


@pytest.mark.parametrize(
    ("returned", "path"),
    [
        ("a string", ""),
        ({"mesages": []}, "/mesages"),
        ({"messages": [{"role": "robot", "content": "x"}]}, "/messages/0/role"),
        ({"interrupt": {"reason": 1}}, "/interrupt/reason"),
        ({"retry": {"feedback": "pre hooks cannot retry"}}, "/retry"),
    ],
)
def test_pre_results_of_the_wrong_shape(returned: Any, path: str) -> None:
    transport = Transport(ok=const(None), bad=const(returned), never=const(None))
    result = run(sample(), config(pre=[src("ok"), src("bad"), src("never")]), transport)
    assert transport.names() == ["ok", "bad"]
    error = result.turn_error
    assert error is not None
    assert (error.kind, error.path) == ("invalid_result", path)
    assert error.hook is not None and (error.hook.chain, error.hook.position) == ("pre", 1)
    assert result.model_calls == []


def test_a_value_that_is_not_json_is_recorded_safely() -> None:
    transport = Transport(bad=const({"model": {1, 2}}))
    result = run(sample(), config(pre=[src("bad")]), transport)
    assert result.turn_error is not None and result.turn_error.path == "/model"
    assert isinstance(result.timeline[0].returned, str)
    assert result.timeline[0].returned.startswith("<not JSON: ")
    result.to_json()


def test_an_exception_fails_the_turn_naming_the_hook() -> None:
    def boom(ctx: dict[str, Any]) -> Any:
        raise ValueError("bad")

    transport = Transport(a=const(None), boom=boom, never=const(None))
    result = run(sample(), config(pre=[src("a"), src("boom"), src("never")]), transport)
    assert transport.names() == ["a", "boom"]
    error = result.turn_error
    assert error is not None
    assert (error.kind, error.reason) == ("exception", "callback")
    assert error.message == "lib/hooks.py:boom at pre[1]: ValueError: bad"
    assert error.hook is not None and (error.hook.chain, error.hook.position) == ("pre", 1)
    assert error.duration_ms == 1.5
    step = result.timeline[-1]
    assert (step.stopped, step.returned, step.stderr) == (
        "turn_error",
        None,
        "Traceback ...\nValueError: bad\n",
    )


def test_an_engine_timeout_keeps_its_kind_and_gets_the_hook() -> None:
    async def transport(hook: ChainHookRef, context: Any, position: int, chain: str) -> Any:
        assert hook.timeout_ms == 50
        return HookReply(
            error=turn_error("timeout", "lib/hooks.py:slow at post[0]: timed out after 50 ms"),
            duration_ms=50.0,
        )

    result = run(sample(), config(post=[src("slow", timeout_ms=50)], defaults=True), transport)
    error = result.turn_error
    assert error is not None
    assert (error.kind, error.reason) == ("timeout", "timeout")
    assert error.message == "lib/hooks.py:slow at post[0]: timed out after 50 ms"
    assert error.hook is not None and (error.hook.function, error.hook.position) == ("slow", 0)


def test_a_transport_that_raises_fails_closed_as_engine_failed() -> None:
    async def transport(*args: Any) -> HookReply:
        raise OSError("fork failed")

    result = run(sample(), config(pre=[src("x")]), transport)
    error = result.turn_error
    assert error is not None
    assert error.kind == "engine_failed"
    assert "lib/hooks.py:x at pre[0]" in error.message and "fork failed" in error.message


def test_a_builtin_that_raises_fails_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(ctx: Any) -> Any:
        raise RuntimeError("oops")

    monkeypatch.setitem(chain_builtins.BUILTIN_HOOKS, "repetitionDetectorHook", ("post", broken))
    result = run(sample(), config(defaults=True))
    error = result.turn_error
    assert error is not None
    assert error.kind == "exception"
    assert error.message == "repetitionDetectorHook at post[1] raised RuntimeError: oops"
    assert error.hook is not None
    assert (error.hook.source, error.hook.position) == ("builtin:repetitionDetectorHook", 1)


def test_an_invalid_sample_context_fails_before_any_hook_runs() -> None:
    transport = Transport(a=const(None))
    broken = ChainSample(context={"messages": "nope"}, responses=(answer(),))
    result = run(broken, config(pre=[src("a")]), transport)
    assert transport.calls == []
    assert result.turn_error is not None
    assert result.turn_error.kind == "sample_invalid"
    assert result.turn_error.path == "/context/messages"


def test_a_hand_built_config_with_a_misplaced_builtin_fails_closed() -> None:
    hooks = ChainConfig(post=(ChainHookRef(builtin="historyTrimmerHook"),))
    result = run(sample(), hooks)
    error = result.turn_error
    assert error is not None
    assert (error.kind, error.path) == ("config_invalid", "/chain/post/0")


def test_cancelling_the_run_cancels_the_pending_hook() -> None:
    started = asyncio.Event()

    async def forever(*args: Any) -> HookReply:
        started.set()
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")

    async def main() -> None:
        task = asyncio.create_task(run_chain(sample(), config(pre=[src("x")]), forever))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())


# --------------------------------------------------------------------------------------------
# Default post validators


def test_default_validators_run_after_the_users_post_hooks() -> None:
    hooks = config(post=[src("mine")], defaults=True)
    assert [h.label for h in hooks.post_chain()] == [
        "lib/hooks.py:mine",
        "toolCallValidatorHook",
        "repetitionDetectorHook",
    ]
    assert [h.default for h in hooks.post_chain()] == [False, True, True]
    # They check the response the user's hook produced.
    transport = Transport(mine=const({"response": calling("ghost")}))
    result = run(sample([answer(), answer()]), hooks, transport)
    assert stops(result)[:2] == [("post", 0, 0, None), ("post", 1, 0, "retry")]


def test_default_validators_can_be_switched_off_or_placed() -> None:
    assert (
        config(post=[src("mine")], defaults=False).post_chain() == config(post=[src("mine")]).post
    )
    placed = config(post=["repetitionDetectorHook", src("mine")], defaults=True)
    assert [h.label for h in placed.post_chain()] == [
        "repetitionDetectorHook",
        "lib/hooks.py:mine",
        "toolCallValidatorHook",
    ]
    assert [f.path for f in placed.warnings] == [("post", 0)]
    result = run(sample([calling("ghost"), answer()]), config(defaults=False))
    assert result.timeline == [] and result.response == calling("ghost")


# --------------------------------------------------------------------------------------------
# Parsing the config


def test_config_defaults_and_round_trip() -> None:
    parsed = parse_chain_config({})
    assert isinstance(parsed, ChainConfig)
    assert (parsed.pre, parsed.post, parsed.default_post_validators) == ((), (), True)
    value = {
        "pre": ["historyTrimmerHook", {"source": "lib/x.py:trim", "timeout_ms": 500}],
        "post": [{"source": "lib/x.py"}],
        "default_post_validators": False,
    }
    parsed = parse_chain_config(value)
    assert isinstance(parsed, ChainConfig)
    assert parsed.to_json() == value
    assert parsed.pre[1].timeout_ms == 500
    assert parsed.post[0].timeout_ms == DEFAULT_HOOK_TIMEOUT_MS
    assert parsed.post[0].source_ref is not None
    assert parsed.post[0].label == "lib/x.py:main"
    assert validate_chain_config(value) == []


def paths(found: list[Finding] | Any) -> list[tuple[Any, ...]]:
    assert isinstance(found, list), found
    return [f.path for f in found]


def test_config_errors_carry_paths_under_the_section() -> None:
    value = {
        "pre": ["toolCallValidatorHook", "historyTrimer", "lib/x.py:fn", 3],
        "post": [
            {"source": "../escape.py"},
            {"source": ""},
            {"timeout_ms": 10},
            {"source": "a.py", "timeout_ms": 0},
            {"source": "a.py", "timeout_ms": 300_001},
            {"source": "a.py", "timeout_ms": True},
            {"source": "a.py", "timout_ms": 5},
        ],
        "default_post_validators": "yes",
        "extra": 1,
    }
    found = parse_chain_config(value, base=("chain",))
    assert paths(found) == [
        ("chain", "extra"),
        ("chain", "pre", 0),
        ("chain", "pre", 1),
        ("chain", "pre", 2),
        ("chain", "pre", 3),
        ("chain", "post", 0, "source"),
        ("chain", "post", 1, "source"),
        ("chain", "post", 2, "source"),
        ("chain", "post", 3, "timeout_ms"),
        ("chain", "post", 4, "timeout_ms"),
        ("chain", "post", 5, "timeout_ms"),
        ("chain", "post", 6, "timout_ms"),
        ("chain", "default_post_validators"),
    ]
    assert all(f.severity == "error" for f in found)
    messages = {f.path: f.message for f in found}
    assert "list it under post" in messages[("chain", "pre", 0)]
    assert "did you mean 'historyTrimmerHook'" in messages[("chain", "pre", 1)]
    assert '{"source": "lib/x.py:fn"}' in messages[("chain", "pre", 2)]
    assert "did you mean 'timeout_ms'" in messages[("chain", "post", 6, "timout_ms")]
    assert parse_chain_config([]) != [] and paths(parse_chain_config([])) == [()]
    assert paths(parse_chain_config({"pre": {}})) == [("pre",)]


def test_config_warnings_do_not_stop_parsing() -> None:
    parsed = parse_chain_config({"pre": ["historyTrimmerHook", "historyTrimmerHook"]})
    assert isinstance(parsed, ChainConfig)
    assert len(parsed.pre) == 2
    assert [(f.path, f.severity) for f in parsed.warnings] == [(("pre", 1), "warning")]
    found = parse_chain_config({"pre": ["historyTrimmerHook", "historyTrimmerHook", 1]})
    assert [f.severity for f in found] == ["error", "warning"]


# --------------------------------------------------------------------------------------------
# Parsing the sample


def test_sample_findings_are_rebased_and_name_the_sample_path() -> None:
    value = sample_json()
    value["context"]["messages"][0]["role"] = "robot"
    value["responses"] = [{"role": "user", "content": 1}, answer()]
    value["contract"] = "pre_llm"
    value["notes"] = "x"
    found = parse_chain_sample(value, base=("sample",))
    assert isinstance(found, list)
    assert paths(errors(found)) == [
        ("sample", "contract"),
        ("sample", "context", "messages", 0, "role"),
        ("sample", "responses", 0, "content"),
    ]
    assert paths(warnings(found)) == [("sample", "notes"), ("sample", "responses", 0, "role")]
    by_path = {f.path: f.message for f in found}
    assert by_path[("sample", "context", "messages", 0, "role")].startswith(
        "sample.context.messages[0].role must be one of"
    )
    assert by_path[("sample", "responses", 0, "content")].startswith(
        "sample.responses[0].content must be"
    )
    assert "stands in for the model's answer" in by_path[("sample", "responses", 0, "role")]


def test_sample_requires_context_and_responses() -> None:
    assert paths(parse_chain_sample({"contract": "chain"})) == [("context",), ("responses",)]
    assert paths(parse_chain_sample({"contract": "chain", "context": {}, "responses": {}}))[-1] == (
        "responses",
    )
    assert paths(parse_chain_sample(None)) == [()]
    assert validate_chain_sample(sample_json()) == []
    good = parse_chain_sample({**sample_json(), "name": "n", "description": "d"})
    assert isinstance(good, ChainSample) and (good.name, good.description) == ("n", "d")


# --------------------------------------------------------------------------------------------
# Studio rules


def test_chain_rules_are_new_studio_rules() -> None:
    ids = [rule.id for rule in CHAIN_STUDIO_RULES]
    assert len(ids) == len(set(ids))
    assert all(rule.id.startswith("pleach.studio.") and rule.text for rule in CHAIN_STUDIO_RULES)
    assert not set(ids) & STUDIO_RULE_IDS
    assert any(
        f.rule in ids for f in parse_chain_config({"post": ["toolCallValidatorHook"]}).warnings
    )


def test_a_scripted_response_that_is_not_an_object_is_a_finding():
    found = parse_chain_sample(
        {"contract": "chain", "context": _context_for_null_responses(), "responses": [None, 3]}
    )
    assert [f.pointer for f in found if f.severity == "error"] == ["/responses/0", "/responses/1"]


def _context_for_null_responses() -> dict:
    return {
        "messages": [{"role": "user", "content": "hi"}],
        "model": "m",
        "modelProfile": None,
        "tools": [],
        "systemPrompt": "",
        "state": {},
    }
