"""Differential checks of spec/adf.md §1–§2 and §7: valid agent configs and requests, mutated
(keys dropped, retyped, reordered or nulled, huge numbers, colons in sources, index-like keys),
judged by the studio and by the plain statement of the rules below, which shares no code with it.

The statement follows the runtime: it stops at the first failure, in the order the runtime
checks, reads numbers as doubles do (an integer too large for one is Infinity), and lists an
object's keys as JavaScript does. The folder workspace's own rule (a source may not leave the
folder) is stated apart, since only the studio has it.
"""

from __future__ import annotations

import math
import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from studio.core.findings import errors
from studio.core.pre_llm.config import check_agent_config
from studio.core.pre_llm.request import validate_request
from tests.support.hypothesis_profiles import examples

# ---------------------------------------------------------------------------------------------
# The rules, stated plainly

WHITESPACE = set("\t\n\v\f\r \u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff") | {
    chr(c) for c in range(0x2000, 0x200B)
}
LOOP_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}")
FUNCTION = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
INDEX = re.compile(r"0|[1-9][0-9]*")
LIMIT = "/limits/execution_timeout_ms"


def double(value: Any) -> float | None:
    """The number JavaScript holds for a JSON number, or None for anything else."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def is_integer(value: Any) -> bool:
    number = double(value)
    return number is not None and math.isfinite(number) and number == int(number)


def trimmed(text: str) -> str:
    start, end = 0, len(text)
    while start < end and text[start] in WHITESPACE:
        start += 1
    while end > start and text[end - 1] in WHITESPACE:
        end -= 1
    return text[start:end]


def source_path(source: str) -> str:
    colon = source.rfind(":")
    if colon > 0 and FUNCTION.fullmatch(source[colon + 1 :]):
        return source[:colon]
    return source


def leaves_folder(path: str) -> bool:
    if path.startswith(("/", "\\")) or re.match(r"[A-Za-z]:[/\\]", path) or "\x00" in path:
        return True
    depth = 0
    for part in re.split(r"[/\\]", path):
        if part == "..":
            depth -= 1
            if depth < 0:
                return True
        elif part not in ("", "."):
            depth += 1
    return False


def js_keys(obj: dict[str, Any]) -> list[str]:
    indices = [k for k in obj if INDEX.fullmatch(k) and int(k) < 2**32 - 1]
    return sorted(indices, key=int) + [k for k in obj if k not in indices]


def first_config_error(hook: Any, home: str) -> str | None:
    """Where the runtime (and, for a folder, the studio's own rule) first fails the config."""
    at = "/pre_llm_hook"
    if not isinstance(hook, dict):
        return at
    source = hook.get("source")
    if not isinstance(source, str) or not trimmed(source):
        return at + "/source"
    if home == "folder" and leaves_folder(source_path(trimmed(source))):
        return at + "/source"
    scope = "all" if hook.get("scope") is None else hook["scope"]
    if scope not in ("all", "main", "loops") or not isinstance(scope, str):
        return at + "/scope"
    if "include_main" in hook and (not isinstance(hook["include_main"], bool) or scope != "loops"):
        return at + "/include_main"
    if scope == "loops":
        loops = hook.get("loops")
        if not isinstance(loops, list) or not loops or len(loops) > 64:
            return at + "/loops"
        for index, name in enumerate(loops):
            if not isinstance(name, str) or not LOOP_NAME.fullmatch(name) or name == "main":
                return f"{at}/loops/{index}"
            if name in loops[:index]:
                return f"{at}/loops/{index}"
    elif "loops" in hook:
        return at + "/loops"
    if "timeout_ms" in hook:
        timeout = hook["timeout_ms"]
        if not is_integer(timeout) or not 1000 <= timeout <= 300000:
            return at + "/timeout_ms"
    return None


def limit_of(document: dict[str, Any]) -> float | None:
    limits = document.get("limits")
    value = limits.get("execution_timeout_ms") if isinstance(limits, dict) else None
    return double(value) if is_integer(value) and double(value) > 0 else None  # type: ignore[operator]


def hook_is_set(document: dict[str, Any]) -> bool:
    hook = document.get("pre_llm_hook")
    falsy = hook is None or hook is False or hook == "" or (double(hook) in (0.0,))
    return "pre_llm_hook" in document and not falsy


def runs_on(hook: dict[str, Any], loop: str) -> bool:
    scope = hook.get("scope") or "all"
    if scope == "all":
        return True
    if scope == "main":
        return loop == "main"
    if loop == "main":
        return hook.get("include_main") is True
    return loop in hook["loops"]


# ---------------------------------------------------------------------------------------------
# Inputs: valid configs, then mutations

SOURCES = [
    "lib/policy.js:transform",
    "a:b:c",
    "p:1fn",
    "c:hook.js",
    "c:hook.js:go",
    ":main",
    "lib/x.js:",
    "../up.js",
    "lib/../../up.js:go",
    "/abs.js",
    "C:\\win.js",
    "d:/x.js",
    "lib/../ok.js",
    "  padded.js  ",
    "\u3000",
    "\x1c",
]
ODD_VALUES = [None, True, False, 0, -1, 1.5, 1000.0, 10**400, math.inf, "", "x", [], {}, ["a"]]
LOOP_NAMES = ["researcher", "r-2", "a_b", "main", "Bad", "", "x" * 33, 7, None, "researcher"]

valid_hooks = st.one_of(
    st.fixed_dictionaries({"source": st.sampled_from(SOURCES[:3])}),
    st.fixed_dictionaries({"source": st.just("h.js"), "scope": st.sampled_from(["all", "main"])}),
    st.fixed_dictionaries(
        {
            "source": st.just("h.js"),
            "scope": st.just("loops"),
            "loops": st.lists(st.sampled_from(["x", "y", "z-1"]), min_size=1, unique=True),
        },
        optional={"include_main": st.booleans()},
    ),
).flatmap(
    lambda hook: st.fixed_dictionaries(
        {}, optional={"timeout_ms": st.sampled_from([1000, 5000.0, 300000])}
    ).map(lambda extra: {**hook, **extra})
)


@st.composite
def mutated_hooks(draw: st.DrawFn) -> Any:
    hook: dict[str, Any] = dict(draw(valid_hooks))
    keys = ["source", "scope", "loops", "include_main", "timeout_ms", "note", "0"]
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["drop", "retype", "null", "source", "loops", "shuffle"]))
        key = draw(st.sampled_from(keys))
        if kind == "drop":
            hook.pop(key, None)
        elif kind == "retype":
            hook[key] = draw(st.sampled_from(ODD_VALUES))
        elif kind == "null":
            hook[key] = None
        elif kind == "source":
            hook["source"] = draw(st.sampled_from(SOURCES))
        elif kind == "loops":
            hook["loops"] = draw(st.lists(st.sampled_from(LOOP_NAMES), max_size=4))
        else:
            order = draw(st.permutations(list(hook)))
            hook = {k: hook[k] for k in order}
    return hook


limits = st.one_of(
    st.none(),
    st.sampled_from([{}, 5, None]),
    st.sampled_from([60000, 2000, 1, 0, -1, 1.5, 2000.0, 10**400, 10**300, math.inf, "60000"]).map(
        lambda value: {"execution_timeout_ms": value}
    ),
)


@st.composite
def documents(draw: st.DrawFn) -> dict[str, Any]:
    document: dict[str, Any] = {}
    hook = draw(st.one_of(mutated_hooks(), st.sampled_from([None, False, 0, "", "h.js", [], 1])))
    if draw(st.booleans()) or hook is not None:
        document["pre_llm_hook"] = hook
    limit = draw(limits)
    if limit is not None:
        document["limits"] = limit
    return document


# ---------------------------------------------------------------------------------------------
# The comparisons


@settings(max_examples=examples(600))
@given(documents(), st.sampled_from(["folder", "adf"]))
def test_config_verdicts_agree(document, home):
    check = check_agent_config(document, home)
    hook = document.get("pre_llm_hook")
    first = first_config_error(hook, home) if hook_is_set(document) else None

    assert check.valid is (first is None)
    found = errors(check.findings)
    assert (found[0].pointer if found else None) == first

    limit = limit_of(document)
    expected_runtime = [LIMIT] if hook_is_set(document) and limit is None else []
    assert [f.pointer for f in check.runtime_errors] == expected_runtime

    warned = {f.pointer for f in check.findings if f.severity == "warning"}
    if check.valid and isinstance(hook, dict):
        assert ("/pre_llm_hook/scope" in warned) is ("scope" in hook and hook["scope"] is None)
        escapes = leaves_folder(source_path(trimmed(hook["source"])))
        assert ("/pre_llm_hook/source" in warned) is (home == "adf" and escapes)

    if check.valid:
        loops = ["main", "x", "y", "z-1", "never-declared"]
        expected = {
            loop: hook_is_set(document) and runs_on(hook, loop)  # type: ignore[arg-type]
            for loop in loops
        }
        assert check.applies_table(loops[1:]) == expected
        if hook_is_set(document) and limit is not None:
            timeout = hook.get("timeout_ms")  # type: ignore[union-attr]
            wanted = limit if timeout is None else timeout
            assert check.effective_timeout_ms == min(wanted, limit, 300000)
        elif hook_is_set(document):
            assert check.effective_timeout_ms is None


OPTION_RULES = {
    "maxTokens": lambda v: is_integer(v) and v > 0,
    "thinkingBudget": lambda v: is_integer(v) and v > 0,
    "temperature": lambda v: double(v) is not None and math.isfinite(double(v)) and 0 <= v <= 2,
    "topP": lambda v: double(v) is not None and math.isfinite(double(v)) and 0 <= v <= 1,
    "dynamicInstructions": lambda v: isinstance(v, str),
    "reasoning": lambda v: isinstance(v, dict),
    "providerParams": lambda v: isinstance(v, dict),
}
OPTION_KEYS = [*OPTION_RULES, "0", "5", "10", "07", "4294967294", "4294967295", "extra"]
OPTION_VALUES = [0, 1, 1.5, 3, 10**400, "x", None, True, {}, []]


def first_request_error(request: dict[str, Any]) -> str | None:
    """Where the runtime first fails a request whose messages and tools are valid."""
    for key in js_keys(request):
        if key not in ("system", "messages", "tools", "options"):
            return "/" + key
    for key in js_keys(request["options"]):
        rule = OPTION_RULES.get(key)
        if rule is None or not rule(request["options"][key]):
            return "/options/" + key
    return None


@st.composite
def requests(draw: st.DrawFn) -> dict[str, Any]:
    options = draw(
        st.dictionaries(st.sampled_from(OPTION_KEYS), st.sampled_from(OPTION_VALUES), max_size=4)
    )
    request: dict[str, Any] = {
        "system": "",
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [],
        "options": options,
    }
    for extra in draw(st.lists(st.sampled_from(["9", "10", "0", "zeta", "01", "request"]))):
        request[extra] = 1
    order = draw(st.permutations(list(request)))
    return {k: request[k] for k in order}


@settings(max_examples=examples(600))
@given(requests())
def test_request_first_errors_follow_javascript_key_order(request):
    found = errors(validate_request(request))
    assert (found[0].pointer if found else None) == first_request_error(request)
