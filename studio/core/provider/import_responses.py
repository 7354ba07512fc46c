"""An OpenAI Responses body (``POST /v1/responses``) as a pre-LLM request
(spec/provider-requests.md §3)."""

from __future__ import annotations

from typing import Any

from studio.core.findings import PathPart
from studio.core.provider.import_common import (
    join_system,
    message_content,
    not_representable,
    number_option,
    parse_arguments,
    restore_stamp,
)
from studio.core.provider.losses import LossReport

KNOWN_KEYS = frozenset(
    {
        "model",
        "instructions",
        "input",
        "tools",
        "max_output_tokens",
        "reasoning",
        "temperature",
        "top_p",
        "previous_response_id",
    }
)
SERVER_HISTORY = "history lives on the provider's server: the sample is incomplete"


class _Reader:
    def __init__(self, report: LossReport) -> None:
        self.report = report
        self.system: list[tuple[tuple[PathPart, ...], str]] = []
        self.messages: list[dict[str, Any]] = []
        self.incomplete = False
        self._results: dict[str, Any] | None = None  # the user message tool outputs gather in

    def item(self, item: Any, path: tuple[PathPart, ...]) -> None:
        report = self.report
        if not isinstance(item, dict):
            report.drop(path, "not an input item")
            return
        kind = item.get("type", "message")
        if kind == "function_call_output":
            self._output(item, path)
            return
        gathered = self._results
        self._results = None
        if kind == "message":
            role = item.get("role")
            if role in ("system", "developer"):
                self.system += _system_texts(item, path, report)
                if self.messages:
                    report.change(path, "a system text after the first message moves to the system")
            elif role == "user":
                message = _user(item, path, report)
                if gathered is not None:
                    gathered["content"] += (
                        message["content"]
                        if isinstance(message["content"], list)
                        else [{"type": "text", "text": message["content"]}]
                    )
                    gathered.update({k: v for k, v in message.items() if k != "content"})
                    report.change(path, "joined to the tool outputs before it, as one user message")
                else:
                    self.messages.append(message)
            elif role == "assistant":
                self.messages.append(_assistant(item, path, report))
            else:
                report.drop(path, f"a message with role {role!r}")
        elif kind == "function_call":
            self._call(item, path)
        elif kind == "item_reference":
            self.incomplete = True
            report.drop(path, f"a reference to a stored item: {SERVER_HISTORY}")
        elif kind == "reasoning":
            report.drop(path, "a reasoning item: its content is encrypted for the provider")
        else:
            report.drop(
                path, f"an item of type {kind!r}: a built-in tool's round, which the provider runs"
            )

    def _call(self, item: dict[str, Any], path: tuple[PathPart, ...]) -> None:
        block = {
            "type": "tool_use",
            "id": item.get("call_id"),
            "name": item.get("name"),
            "input": parse_arguments(item.get("arguments"), (*path, "arguments"), self.report),
        }
        last = self.messages[-1] if self.messages else None
        if last is not None and last["role"] == "assistant":
            if isinstance(last["content"], str):
                text = last["content"]
                last["content"] = [{"type": "text", "text": text}] if text else []
            last["content"].append(block)
        else:
            self.messages.append({"role": "assistant", "content": [block]})

    def _output(self, item: dict[str, Any], path: tuple[PathPart, ...]) -> None:
        output = item.get("output", "")
        if not isinstance(output, str):
            texts: list[str] = []
            for k, part in enumerate(output if isinstance(output, list) else []):
                if isinstance(part, dict) and part.get("type") in ("input_text", "output_text"):
                    texts.append(str(part.get("text", "")))
                else:
                    kind = part.get("type") if isinstance(part, dict) else None
                    self.report.drop(
                        (*path, "output", k),
                        f"a part of type {kind!r}: a tool result here is a string",
                    )
            output = "\n".join(texts)
        block = {"type": "tool_result", "tool_use_id": item.get("call_id"), "content": output}
        if self._results is None:
            self._results = {"role": "user", "content": []}
            self.messages.append(self._results)
        self._results["content"].append(block)


def import_responses(body: dict[str, Any], report: LossReport) -> tuple[dict[str, Any], bool]:
    """The request, and whether it is incomplete (part of its history is on the server)."""
    reader = _Reader(report)
    instructions = body.get("instructions")
    if isinstance(instructions, str):
        reader.system.append((("instructions",), instructions))
    elif instructions is not None:
        report.drop(("instructions",), "not a string")
    raw = body.get("input")
    if isinstance(raw, str):
        message: dict[str, Any] = {"role": "user"}
        message["content"] = restore_stamp(message, raw, ("input",), report)
        reader.messages.append(message)
    else:
        for k, item in enumerate(raw if isinstance(raw, list) else []):
            reader.item(item, ("input", k))
    if body.get("previous_response_id") is not None:
        reader.incomplete = True
        report.drop(
            ("previous_response_id",), f"it continues an earlier response: {SERVER_HISTORY}"
        )
    options: dict[str, Any] = {}
    number_option(body, "max_output_tokens", "maxTokens", options, report)
    number_option(body, "temperature", "temperature", options, report)
    number_option(body, "top_p", "topP", options, report)
    if body.get("reasoning") is not None:
        options["reasoning"] = body["reasoning"]
    request = {
        "system": join_system(reader.system, report),
        "messages": reader.messages,
        "tools": _tools(body.get("tools"), report),
        "options": options,
    }
    if "model" in body:
        report.unrepresentable(("model",), "the model comes from the agent's config")
    not_representable(
        body,
        [key for key in body if key not in KNOWN_KEYS],
        report,
        "a request has no place for it",
    )
    return request, reader.incomplete


def _system_texts(
    item: dict[str, Any], path: tuple[PathPart, ...], report: LossReport
) -> list[tuple[tuple[PathPart, ...], str]]:
    content = item.get("content")
    if isinstance(content, str):
        return [(path, content)]
    texts: list[str] = []
    for k, part in enumerate(content if isinstance(content, list) else []):
        if isinstance(part, dict) and part.get("type") == "input_text":
            texts.append(str(part.get("text", "")))
        else:
            report.drop((*path, "content", k), "only text is kept in a system message")
    return [(path, "\n".join(texts))] if texts else []


def _user(item: dict[str, Any], path: tuple[PathPart, ...], report: LossReport) -> dict[str, Any]:
    out: dict[str, Any] = {"role": "user"}
    out["content"] = message_content(out, item.get("content"), path, _user_part, report)
    return out


def _user_part(part: Any, where: tuple[PathPart, ...], report: LossReport) -> dict[str, Any] | None:
    kind = part.get("type") if isinstance(part, dict) else None
    if kind == "input_text":
        return {"type": "text", "text": part.get("text")}
    if kind == "input_image" and isinstance(part.get("image_url"), str):
        if "detail" in part:
            report.drop((*where, "detail"), "an image here has only its URL")
        return {"type": "image_url", "image_url": {"url": part["image_url"]}}
    if kind == "input_image":
        report.drop(where, "an image given by file id: only image URLs are kept")
    else:
        report.drop(where, f"a part of type {kind!r}, which a request does not have")
    return None


def _assistant(item: dict[str, Any], path: tuple[PathPart, ...], report: LossReport) -> Any:
    out: dict[str, Any] = {"role": "assistant"}
    content = item.get("content")
    if isinstance(content, str):
        out["content"] = restore_stamp(out, content, (*path, "content"), report)
        return out
    texts: list[str] = []
    for k, part in enumerate(content if isinstance(content, list) else []):
        if isinstance(part, dict) and part.get("type") in ("output_text", "input_text"):
            texts.append(str(part.get("text", "")))
        else:
            kind = part.get("type") if isinstance(part, dict) else None
            report.drop((*path, "content", k), f"a part of type {kind!r}: only text is kept")
    text = "\n".join(texts)
    out["content"] = restore_stamp(out, text, (*path, "content"), report)
    return out


def _tools(tools: Any, report: LossReport) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for k, tool in enumerate(tools if isinstance(tools, list) else []):
        path: tuple[PathPart, ...] = ("tools", k)
        kind = tool.get("type") if isinstance(tool, dict) else None
        if kind != "function":
            report.drop(path, f"built-in tool {kind!r}: the provider runs it, not ADF")
            continue
        if "strict" in tool:
            report.drop((*path, "strict"), "a tool here has no strict mode")
        out.append(
            {
                "name": tool.get("name"),
                "description": tool.get("description") or "",
                "input_schema": tool.get("parameters") or {"type": "object", "properties": {}},
            }
        )
    return out
