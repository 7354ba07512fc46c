"""Step-preparation and chain hooks written in TypeScript (spec/js-runtime.md §3): real ES module
exports run by the node runtime through the real runner, judged by the same contracts as their
Python twins, on a copy of the bundled workspace."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from studio.core.chain.config import STUDIO_DEFAULT_EXPORT
from studio.core.chain.studio_rules import find_studio_rule
from studio.core.step.sample import parse_step_sample
from studio.core.workspace.folder import Workspace
from tests.support.runners import LiveRunner
from tests.support.workspaces import copy_bundled_workspace, write_json


@pytest.fixture
def bundled(tmp_path: Path):
    root = copy_bundled_workspace(tmp_path / "ws")
    step = json.loads((root / "samples" / "step-escalated.json").read_text())
    step["resources"] += [
        {"identity": "blackboard:late", "failure": "unresolved"},
        {"identity": "blackboard:store", "failure": "storage-unavailable"},
        {"identity": "blackboard:secret", "failure": "unauthorized"},
    ]
    stats = parse_step_sample(step).stats.to_json()  # type: ignore[union-attr]
    step["step"]["stats"] = {**stats, "at": "2026-03-01T09:15:00.000Z"}
    write_json(root / "samples" / "step-resources.json", step)
    live = LiveRunner(Workspace.open(root))
    yield live
    live.close()


def write(live: LiveRunner, name: str, text: str) -> str:
    (live.runner.workspace.root / "lib" / name).write_text(text)
    return f"lib/{name}"


def step(live: LiveRunner, text: str, sample: str = "step-resources", name: str = "h.ts"):
    return live.run(sample, hook=write(live, name, text))


def without_ids(record: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if record is None else {k: v for k, v in record.items() if k != "sealedRequestId"}


# ---- the twins -------------------------------------------------------------------------------


def test_the_typescript_step_twin_decides_as_the_python_one(bundled):
    ts = bundled.run("step-escalated", hook="lib/prepare.ts")
    py = bundled.run("step-escalated", hook="lib/prepare.py:prepare_step")
    assert ts.status == py.status == "ok", ts.turn_error
    assert ts.hook.function == "prepareStep"
    assert without_ids(ts.decision_record) == without_ids(py.decision_record)
    assert ts.effective == py.effective
    assert ts.result == py.result
    assert ts.stderr == ts.stdout == "" and ts.warnings == py.warnings


def test_the_typescript_chain_twins_run_the_chain_as_the_python_ones(bundled):
    root = bundled.runner.workspace.root
    settings = json.loads((root / "hookstudio.json").read_text())
    ts = bundled.run("chain-refund")
    names = {
        "chain_hooks.ts:policySuffix": "chain_hooks.py:policy_suffix",
        "chain_hooks.ts:routeSmallTalk": "chain_hooks.py:route_small_talk",
        "chain_hooks.ts:noRefundPromises": "chain_hooks.py:no_refund_promises",
    }
    text = json.dumps(settings)
    for old, new in names.items():
        assert old in text
        text = text.replace(old, new)
    (root / "hookstudio.json").write_text(text)
    py = bundled.run("chain-refund")
    assert ts.status == py.status == "ok", ts.turn_error
    assert {k: v for k, v in ts.result.items() if k != "timeline"} == {
        k: v for k, v in py.result.items() if k != "timeline"
    }
    timeline = [(s.chain, s.position, s.attempt, s.changed, s.stopped) for s in ts.chain]
    assert timeline == [(s.chain, s.position, s.attempt, s.changed, s.stopped) for s in py.chain]
    assert [s.hook for s in ts.chain if "chain_hooks" in s.hook] == [
        "lib/chain_hooks.ts:routeSmallTalk",
        "lib/chain_hooks.ts:policySuffix",
        "lib/chain_hooks.ts:noRefundPromises",
        "lib/chain_hooks.ts:noRefundPromises",
    ]


def test_a_chain_hook_that_short_circuits_stops_the_chain(bundled):
    root = bundled.runner.workspace.root
    sample = json.loads((root / "samples" / "chain-refund.json").read_text())
    sample["context"]["messages"] = [{"role": "user", "content": "Hello"}]
    write_json(root / "samples" / "chain-hello.json", sample)
    outcome = bundled.run("chain-hello", hook="lib/chain_hooks.ts:routeSmallTalk")
    assert outcome.status == "ok", outcome.turn_error
    stopped = [s.stopped for s in outcome.chain if s.stopped]
    assert stopped == ["shortCircuit"]


def test_a_chain_hook_of_the_wrong_shape_fails_the_turn_at_its_position(bundled):
    source = write(bundled, "bad_chain.ts", "export default () => ({ sytemPromptSuffix: 1 });\n")
    outcome = bundled.run("chain-refund", hook=source)
    assert outcome.status == "turn_error"
    assert outcome.turn_error.kind == "invalid_result"


def test_a_chain_hook_returning_a_bigint_fails_closed(bundled):
    source = write(bundled, "big_chain.ts", "export default () => ({ state: { n: 1n } });\n")
    error = bundled.run("chain-refund", hook=source).turn_error
    assert error.kind == "invalid_result"
    assert "BigInt" in error.message


# ---- which export ------------------------------------------------------------------------------


def test_a_module_source_without_a_name_calls_prepare_step_and_python_keeps_main(bundled):
    source = write(bundled, "other.ts", "export function main() { return { model: 'm' }; }\n")
    outcome = bundled.run("step-escalated", hook=source)
    assert outcome.turn_error.kind == "function_missing"
    assert "`prepareStep` is not exported by lib/other.ts; its exports: main (a function)" in (
        outcome.turn_error.message
    )
    named = bundled.run("step-escalated", hook=f"{source}:main")
    assert named.status == "ok" and named.effective["model"] == "m"
    python = bundled.run("step-escalated", hook="lib/prepare.py")
    assert python.turn_error.kind == "function_missing"
    assert python.hook.function == "main"


def chain_of(live: LiveRunner, source: str) -> Any:
    """Run the chain sample with ``source`` as its only pre hook."""
    path = live.runner.workspace.root / "hookstudio.json"
    settings = json.loads(path.read_text())
    settings["chain"] = {"pre": [{"source": source}], "post": []}
    path.write_text(json.dumps(settings))
    return live.run("chain-refund")


def test_a_chain_module_without_a_name_calls_its_default_export_and_python_keeps_main(bundled):
    source = write(
        bundled,
        "suffix.ts",
        "export default function (ctx: any) { return { systemPromptSuffix: 'from default' }; }\n"
        "export function main() { return { systemPromptSuffix: 'from main' }; }\n",
    )
    outcome = chain_of(bundled, source)
    assert outcome.status == "ok", outcome.turn_error
    assert "from default" in json.dumps(outcome.result)
    assert "from main" not in json.dumps(outcome.result)
    assert outcome.chain[0].hook == "lib/suffix.ts:default"
    named = chain_of(bundled, f"{source}:main")
    assert named.status == "ok" and "from main" in json.dumps(named.result)
    python = write(
        bundled, "suffix.py", "def main(ctx):\n    return {'systemPromptSuffix': 'py'}\n"
    )
    assert chain_of(bundled, python).status == "ok"
    rule = find_studio_rule(STUDIO_DEFAULT_EXPORT)
    assert rule is not None and "default export" in rule.text


def test_a_chain_module_without_a_default_export_is_an_error_listing_its_exports(bundled):
    source = write(
        bundled,
        "named.ts",
        "export function policy(ctx: any) { return {}; }\nexport const VERSION = 2;\n"
        "export class Helper {}\n",
    )
    error = chain_of(bundled, source).turn_error
    assert error.kind == "function_missing"
    assert error.hook.function == "default" and error.hook.position == 0
    assert (
        "lib/named.ts has no default export (`export default`); its exports: "
        "Helper (a class), VERSION (a number), policy (a function)"
    ) in error.message
    not_function = chain_of(bundled, f"{source}:VERSION").turn_error
    assert "`VERSION` exported by lib/named.ts is a number, not a function" in not_function.message


# ---- the step context --------------------------------------------------------------------------


CONTEXT_PROBE = """\
import { workingState, blackboard } from '@use-crux/core';

export async function prepareStep(ctx: any) {
  const first = await ctx.resources.read(workingState('support-control'));
  const again = await ctx.resources.read('working-state:support-control');
  let mutated = 'no';
  try {
    first.escalated = false;
    ctx.messages.push({});
    mutated = 'yes';
  } catch {
    mutated = 'refused';
  }
  let fallback = 'none';
  try { await ctx.resources.read(blackboard('late')); } catch (err: any) {
    fallback = `${err.name}:${err.reason}`;
  }
  return {
    model: {
      at: ctx.stats.at instanceof Date ? ctx.stats.at.toISOString() : 'no date',
      frozen: Object.isFrozen(ctx) && Object.isFrozen(ctx.messages) && Object.isFrozen(first),
      signal: ctx.signal instanceof AbortSignal && !ctx.signal.aborted,
      same: first === again,
      mutated,
      fallback,
      fields: Object.keys(ctx),
    },
  };
}
"""


def test_the_step_context_is_frozen_json_with_a_date_a_signal_and_resources(bundled):
    outcome = step(bundled, CONTEXT_PROBE)
    assert outcome.status == "ok", outcome.turn_error
    assert outcome.effective["model"] == {
        "at": "2026-03-01T09:15:00.000Z",
        "frozen": True,
        "signal": True,
        "same": True,
        "mutated": "refused",
        "fallback": "ResourceReadError:unresolved",
        "fields": [
            "operation",
            "input",
            "index",
            "reason",
            "messages",
            "toolHistory",
            "stats",
            "resources",
            "signal",
        ],
    }
    (read,) = outcome.decision_record["resources"]
    assert read["identity"] == "working-state:support-control"


DATE_PROBE = """\
export function prepareStep(ctx: any) {
  const held = ctx.stats.at;
  held.setTime(0);
  Date.prototype.setFullYear.call(ctx.stats.at, 1999);
  return {
    model: {
      held: held.toISOString(),
      again: ctx.stats.at.toISOString(),
      date: ctx.stats.at instanceof Date,
      keys: Object.keys(ctx.stats),
      json: JSON.parse(JSON.stringify(ctx.stats)).at,
    },
  };
}
"""


def test_stats_at_is_a_date_whose_changes_never_reach_the_context(bundled):
    outcome = step(bundled, DATE_PROBE)
    assert outcome.status == "ok", outcome.turn_error
    model = outcome.effective["model"]
    assert model["held"] == "1970-01-01T00:00:00.000Z"
    assert model["again"] == model["json"] == "2026-03-01T09:15:00.000Z"
    assert model["date"] is True
    assert model["keys"] == list(outcome.input["stats"])


@pytest.mark.parametrize(
    ("handle", "reason"),
    [
        ("blackboard('missing')", "undeclared"),
        ("blackboard('late')", "unresolved"),
        ("blackboard('store')", "storage-unavailable"),
        ("blackboard('secret')", "unauthorized"),
    ],
)
def test_an_uncaught_resource_error_keeps_its_reason_as_in_python(bundled, handle, reason):
    ts = step(
        bundled,
        "import { blackboard } from '@use-crux/core';\n"
        f"export const prepareStep = async (ctx: any) => ctx.resources.read({handle});\n",
    )
    identity = handle.split("'")[1]
    py_source = write(
        bundled,
        "reader.py",
        f"def main(ctx):\n    return ctx.resources.read('blackboard:{identity}')\n",
    )
    py = bundled.run("step-resources", hook=py_source)
    for outcome in (ts, py):
        error = outcome.turn_error
        assert error.kind == "resource_read", error
        assert error.reason == "callback"
        assert error.details["resource_reason"] == reason
        assert error.details["identity"] == f"blackboard:{identity}"
        assert error.message.startswith(f"Preparation resource read failed: {reason}.")


def test_a_preparation_error_the_hook_throws_keeps_its_reason(bundled):
    outcome = step(
        bundled,
        "import { PreparationError } from '@use-crux/core';\n"
        "export function prepareStep() { throw new PreparationError('aborted'); }\n",
    )
    error = outcome.turn_error
    assert error.reason == "aborted"
    assert error.message.startswith("Request preparation failed: aborted.")


def test_an_exception_names_the_line_in_the_ts_file(bundled):
    outcome = step(
        bundled,
        "type Ctx = { input: any };\n\nexport function prepareStep(ctx: Ctx) {\n"
        "  return ctx.input.missing.field;\n}\n",
    )
    error = outcome.turn_error
    assert (error.kind, error.reason) == ("exception", "callback")
    assert error.message.startswith("Request preparation failed: callback.")
    frame = error.traceback[-1]
    assert (frame.file, frame.line, frame.function) == ("lib/h.ts", 4, "prepareStep")
    assert frame.code == "return ctx.input.missing.field;"


def test_an_import_the_stub_lacks_is_a_clear_error(bundled):
    outcome = step(
        bundled,
        "import { defineAgent } from '@use-crux/core';\n"
        "export const prepareStep = () => defineAgent;\n",
    )
    error = outcome.turn_error
    assert error.kind == "load_failed"
    assert "imports 'defineAgent' from '@use-crux/core'" in error.message
    assert "workingState" in error.message


def test_the_deadline_fires_the_signal_and_a_late_result_is_ignored(bundled):
    root = bundled.runner.workspace.root
    sample = json.loads((root / "samples" / "step-escalated.json").read_text())
    sample["deadline_ms"] = 300
    write_json(root / "samples" / "step-short.json", sample)
    outcome = step(
        bundled,
        "export function prepareStep(ctx: any) {\n"
        "  return new Promise((resolve) => ctx.signal.addEventListener('abort', () =>\n"
        "    resolve({ model: String(ctx.signal.reason?.name) })));\n}\n",
        sample="step-short",
    )
    error = outcome.turn_error
    assert (error.kind, error.reason) == ("timeout", "timeout")
    assert error.message.startswith("Request preparation failed: timeout.")
    assert outcome.result is None


def test_a_hook_that_never_yields_is_stopped_after_the_deadline(bundled):
    root = bundled.runner.workspace.root
    sample = json.loads((root / "samples" / "step-escalated.json").read_text())
    sample["deadline_ms"] = 200
    write_json(root / "samples" / "step-short.json", sample)
    outcome = step(bundled, "export function prepareStep() { for (;;) {} }\n", sample="step-short")
    assert (outcome.turn_error.kind, outcome.turn_error.reason) == ("timeout", "timeout")
    follow_up = bundled.run("step-escalated", hook="lib/prepare.ts")
    assert follow_up.status == "ok"


# ---- JavaScript values, judged as the reference judges them ------------------------------------


def returning(live: LiveRunner, expression: str, prelude: str = ""):
    return step(
        live, f"{prelude}\nexport function prepareStep(ctx: any) {{ return {expression}; }}\n"
    )


@pytest.mark.parametrize("falsy", ["undefined", "null", "0", "''", "NaN", "false", "0n"])
def test_every_falsy_value_is_no_amendment(bundled, falsy):
    outcome = returning(bundled, falsy)
    assert outcome.status == "ok", outcome.turn_error
    assert outcome.result is None
    asked = outcome.decision_record["amendment"]
    assert asked["addedContributors"] == 0 and asked["modelChanged"] is False


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("() => 1", "[function anonymous]"),
        ("prepareStep", "[function prepareStep]"),
        ("12n", "12n"),
        ("Infinity", "Infinity"),
        ("Symbol('s')", "Symbol(s)"),
    ],
)
def test_a_truthy_value_that_is_not_an_object_fails_v1(bundled, value, shown):
    error = returning(bundled, value).turn_error
    assert error.kind == "invalid_composition"
    assert error.details["rule"] == "V1"
    assert f"the hook returned {shown}:" in error.message


def test_a_date_or_a_class_instance_is_read_through_its_properties(bundled):
    assert returning(bundled, "new Date()").result == {}
    outcome = returning(
        bundled,
        "new Choice()",
        "class Base { get model() { return 'review-model'; } }\n"
        "class Choice extends Base { activeTools = ['searchKnowledge']; }",
    )
    assert outcome.status == "ok", outcome.turn_error
    assert outcome.effective["model"] == "review-model"
    assert outcome.decision_record["amendment"]["activeTools"] == 1


CLASSES = (
    "class Memory { get id() { return 'notes'; } get kind() { return 'memory'; } }\n"
    "class Pick { constructor(private key: string) {} get id() { return this.key; } }\n"
    "class Ctx { id = 'ctx'; get children() { return [new Memory()]; } }\n"
)


@pytest.mark.parametrize(
    ("expression", "rule"),
    [
        ("{ use: { add: [new Memory()] } }", "V2"),
        ("{ use: { add: [{ __proto__: { kind: 'history' }, id: 'h' }] } }", "V2"),
        ("{ use: { remove: [new Pick('support-memory')] } }", "V5"),
        ("{ use: { remove: [new Pick('safety-policy')] } }", "V6"),
        (
            "{ use: { add: [new Pick('support-persona')], remove: [{ id: 'support-persona' }] } }",
            "V7",
        ),
    ],
)
def test_a_class_instance_inside_the_amendment_is_read_through_its_properties(
    bundled, expression, rule
):
    error = returning(bundled, expression, CLASSES).turn_error
    assert error is not None and error.details["rule"] == rule, error


def test_a_contributor_with_a_getter_for_its_children_brings_their_tools(bundled):
    outcome = returning(
        bundled,
        "{ use: { add: [new Lead()] }, activeTools: ['draft'] }",
        "class Helper { id = 'helper'; get tools() { return ['draft']; } }\n"
        "class Lead { id = 'lead'; get children() { return [new Helper()]; } }\n",
    )
    assert outcome.status == "ok", outcome.turn_error
    assert outcome.result["use"]["add"] == [
        {"id": "lead", "children": [{"id": "helper", "tools": ["draft"]}]}
    ]


@pytest.mark.parametrize(
    ("entry", "shown"),
    [
        ("{ id: NaN }", "use.add[0].id must be a non-empty string, got NaN"),
        ("{ id: 12n }", "use.add[0].id must be a non-empty string, got 12n"),
        ("{ id: new Date(0) }", "use.add[0].id must be a non-empty string, got 1970-01-01"),
        ("{ id: () => 'x' }", "use.add[0].id must be a non-empty string, got [function"),
        ("{ id: 'a', tools: [Symbol('t')] }", "use.add[0].tools[0] must be a non-empty tool name"),
    ],
)
def test_a_value_json_cannot_hold_is_no_string_at_depth(bundled, entry, shown):
    error = returning(bundled, f"{{ use: {{ add: [{entry}] }} }}").turn_error
    assert error is not None and error.details["rule"] == "add-shape", error
    assert shown in error.message


@pytest.mark.parametrize(
    ("selector", "said"),
    [
        ("{ id: NaN }", "has an id that is not a string"),
        ("{ id: 12n }", "has an id that is not a string"),
        ("12n", "has no 'id'"),
    ],
)
def test_a_remove_selector_whose_id_is_not_a_string_selects_nothing(bundled, selector, said):
    root = bundled.runner.workspace.root
    sample = json.loads((root / "samples" / "step-resources.json").read_text())
    sample["baseline"]["contributors"] += [
        {"id": "NaN", "kind": "memory"},
        {"id": "12n", "kind": "memory"},
    ]
    write_json(root / "samples" / "step-odd-ids.json", sample)
    outcome = step(
        bundled,
        f"export const prepareStep = () => ({{ use: {{ remove: [{selector}] }} }});",
        "step-odd-ids",
    )
    assert outcome.status == "ok", outcome.turn_error
    assert outcome.effective["removedContributors"] == []
    assert any(said in w["message"] for w in outcome.warnings), outcome.warnings


def test_prototype_named_keys_at_depth_stay_the_hooks_own(bundled):
    outcome = returning(
        bundled,
        '{ tools: { lookup: JSON.parse(\'{"__proto__": 1, "constructor": 2, "toString": 3}\') },'
        " model: { valueOf: 'v', hasOwnProperty: 'h' } }",
    )
    assert outcome.status == "ok", outcome.turn_error
    assert outcome.result["tools"]["lookup"] == {"__proto__": 1, "constructor": 2, "toString": 3}
    assert outcome.effective["model"] == {"valueOf": "v", "hasOwnProperty": "h"}


def test_an_object_shaped_like_the_crossing_mark_stays_an_object(bundled):
    mark = "{ __studio_js__: 'number', text: 'NaN', truthy: false }"
    outcome = returning(
        bundled,
        f"{{ model: {mark}, inputBudget: {{ max: {mark} }},"
        " tools: { '__studio_js__~': { '__studio_js__~~': 1 } } }",
    )
    assert outcome.result["model"] == {"__studio_js__": "number", "text": "NaN", "truthy": False}
    assert outcome.result["tools"] == {"__studio_js__~": {"__studio_js__~~": 1}}
    error = outcome.turn_error
    assert error.details["rule"] == "V10"
    assert "got NaN" not in error.message and "object" in error.message
    real = returning(bundled, "{ model: NaN }")
    assert real.status == "ok" and real.result["model"] == "NaN"


@pytest.mark.parametrize(
    ("limit", "shown"),
    [("NaN", "NaN"), ("24000n", "24000n"), ("Infinity", "Infinity"), ("new Date(0)", None)],
)
def test_a_budget_limit_javascript_cannot_count_fails_v10(bundled, limit, shown):
    error = returning(bundled, f"{{ inputBudget: {{ max: {limit} }} }}").turn_error
    assert error.details["rule"] == "V10"
    if shown:
        assert error.message.endswith(f"got {shown}")


def test_undefined_keys_are_left_out_and_a_nan_contributor_is_skipped(bundled):
    outcome = returning(
        bundled,
        "{ inputBudget: { max: undefined, optimizeAt: 100 }, use: { add: [NaN, undefined] },"
        " model: undefined }",
    )
    assert outcome.status == "ok", outcome.turn_error
    assert outcome.decision_record["amendment"]["addedContributors"] == 2
    assert outcome.decision_record["amendment"]["modelChanged"] is True
    assert outcome.effective["model"] == "standard-model"


def test_a_spread_that_throws_is_a_callback_failure(bundled):
    error = returning(bundled, "{ activeTools: 5 }").turn_error
    assert (error.kind, error.reason) == ("invalid_result", "callback")
    assert error.message.startswith("Request preparation failed: callback.")


def test_a_cycle_in_the_amendment_is_a_callback_failure(bundled):
    outcome = returning(
        bundled,
        "(() => { const c: any = { id: 'loop', kind: 'context' }; c.children = [c];"
        " return { use: { add: [c] } }; })()",
    )
    assert outcome.turn_error.reason == "callback"
    assert "contains itself" in outcome.turn_error.message


def test_a_tools_key_named_like_a_prototype_member_collides_as_in_the_reference(bundled):
    outcome = returning(bundled, '{ tools: JSON.parse(\'{"__proto__": {"description": "x"}}\') }')
    assert outcome.result["tools"] == {"__proto__": {"description": "x"}}
    assert outcome.turn_error.details["rule"] == "V8"
    for name in ("toString", "constructor", "hasOwnProperty"):
        ts = returning(bundled, f"{{ tools: {{ {name}: {{ description: 'x' }} }} }}")
        assert (ts.turn_error.kind, ts.turn_error.details["rule"]) == ("invalid_composition", "V8")
        py_source = write(
            bundled, "tools.py", f"def main(ctx):\n    return {{'tools': {{'{name}': {{}}}}}}\n"
        )
        py = bundled.run("step-resources", hook=py_source)
        assert py.turn_error.details["rule"] == "V8"
    # In an object literal `__proto__:` sets the prototype; the spread keeps no such key.
    literal = returning(bundled, "{ tools: { __proto__: { toString: 1 } } }")
    assert literal.status == "ok" and literal.result["tools"] == {}


# ---- object identity of contributors ----------------------------------------------------------


def test_the_baselines_own_contributor_adds_nothing_and_a_fresh_copy_duplicates_it(bundled):
    own = returning(
        bundled,
        "{ use: { add: [prompt('support-persona'), prompt('support-persona')] } }",
        "import { prompt } from '@use-crux/core';",
    )
    assert own.status == "ok", own.turn_error
    assert own.effective["addedContributors"] == []
    assert own.decision_record["amendment"]["addedContributors"] == 2
    fresh = returning(bundled, "{ use: { add: [{ id: 'support-persona', kind: 'context' }] } }")
    assert fresh.status == "ok", fresh.turn_error
    assert fresh.effective["addedContributors"] == ["support-persona"]
    assert fresh.effective["contributors"].count("support-persona") == 2


def test_one_object_added_twice_is_one_contributor_and_two_equal_objects_collide(bundled):
    once = returning(
        bundled,
        "(() => { const c = { id: 'extra', tools: ['lookup'] };"
        " return { use: { add: [c, c] } }; })()",
    )
    assert once.status == "ok", once.turn_error
    assert once.effective["addedContributors"] == ["extra"]
    twice = returning(
        bundled,
        "{ use: { add: [{ id: 'extra', tools: ['lookup'] },"
        " { id: 'extra', tools: ['lookup'] }] } }",
    )
    assert twice.turn_error.kind == "invalid_composition"
    assert twice.turn_error.details["rule"] == "tool-collision"
    python = write(
        bundled,
        "twice.py",
        "def main(ctx):\n    c = {'id': 'extra', 'tools': ['lookup']}\n"
        "    return {'use': {'add': [c, dict(c)]}}\n",
    )
    # JSON has no identity: for a Python hook the two equal entries are one contributor.
    assert bundled.run("step-resources", hook=python).effective["addedContributors"] == ["extra"]


def test_a_module_hook_imports_its_own_typescript_modules_and_node_built_ins(bundled):
    write(bundled, "models.ts", "export enum Model { Review = 'review-model' }\n")
    outcome = returning(
        bundled,
        "{ model: `${Model.Review}:${createHash('sha256').update('x').digest('hex').length}` }",
        "import { Model } from './models.ts';\nimport { createHash } from 'node:crypto';",
    )
    assert outcome.status == "ok", outcome.turn_error
    assert outcome.effective["model"] == "review-model:64"


def test_a_typescript_syntax_error_fails_loading_and_the_next_run_works(bundled):
    outcome = step(bundled, "export function prepareStep(ctx: any) {\n  return {;\n}\n")
    error = outcome.turn_error
    assert (error.kind, error.reason) == ("load_failed", "callback")
    assert "lib/h.ts" in error.message
    assert bundled.run("step-escalated", hook="lib/prepare.ts").status == "ok"


def test_console_output_is_captured_without_the_adf_note(bundled):
    outcome = step(
        bundled,
        "export function prepareStep() {\n  console.log('step', 1);\n"
        "  console.error('careful');\n  return undefined;\n}\n",
    )
    assert outcome.status == "ok", outcome.turn_error
    assert (outcome.stdout, outcome.stderr) == ("step 1\n", "careful\n")
    assert outcome.warnings == []


def test_a_stray_rejection_or_uncaught_exception_fails_the_call(bundled):
    rejected = step(
        bundled,
        "export function prepareStep() {\n  Promise.reject(new Error('lost'));\n"
        "  return new Promise(() => {});\n}\n",
    )
    assert "unhandled promise rejection: lost" in rejected.turn_error.message
    thrown = step(
        bundled,
        "export function prepareStep() {\n  setTimeout(() => { throw new Error('late'); });\n"
        "  return new Promise(() => {});\n}\n",
    )
    assert "uncaught exception: late" in thrown.turn_error.message
    assert thrown.turn_error.reason == "callback"


def test_printing_past_the_output_limit_stops_the_hook(bundled):
    outcome = step(
        bundled,
        "export function prepareStep() {\n"
        "  for (let i = 0; i < 4096; i++) console.log('x'.repeat(1024));\n}\n",
    )
    assert outcome.turn_error.kind == "output_limit"
    assert outcome.stdout_truncated
    assert bundled.run("step-escalated", hook="lib/prepare.ts").status == "ok"


def test_a_baseline_tool_named_proto_is_lost_from_the_tool_set(bundled):
    root = bundled.runner.workspace.root
    sample = json.loads((root / "samples" / "step-escalated.json").read_text())
    sample["baseline"]["tools"].append("__proto__")
    sample["baseline"].pop("activeTools")
    write_json(root / "samples" / "step-proto.json", sample)
    ts = bundled.run(
        "step-proto", hook=write(bundled, "p.ts", "export const prepareStep = () => 0;\n")
    )
    assert ts.status == "ok", ts.turn_error
    assert "__proto__" not in ts.effective["tools"]
    named = write(
        bundled, "n.ts", "export const prepareStep = () => ({ activeTools: ['__proto__'] });\n"
    )
    error = bundled.run("step-proto", hook=named).turn_error
    assert error.details["rule"] == "V9"
    python = write(bundled, "n.py", "def main(ctx):\n    return {'activeTools': ['__proto__']}\n")
    assert bundled.run("step-proto", hook=python).turn_error.details["rule"] == "V9"
