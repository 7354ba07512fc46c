"""What a hook sees inside its worker: the step context, the resource reader and the errors.

This module is preloaded in every worker, so it imports nothing but light standard modules
(``json``, ``typing``). The engine sends a step worker ``{"context": {...}, "resources": [...]}``
(built by ``studio.core.step.sample.step_worker_payload``) and the worker calls the hook with
``step_context_for_worker(payload)``.

A step hook receives a :class:`StepContext`; an invocation hook too, one that names itself the
invocation context in its messages. Its fields are readable both ways, ``ctx.reason`` and
``ctx["reason"]``: ``operation``, ``input``, ``index``, ``reason``, ``messages``, ``toolHistory``
(also ``ctx.tool_history``), ``stats`` and ``resources``. The values are plain JSON values (dicts,
lists, strings, numbers); changing them changes nothing outside the hook. The context itself is
read-only.

Reading resources, sync or async
--------------------------------
A hook may be a plain ``def`` or an ``async def``; reading works the same in both:

* ``ctx.resources.read(handle)`` returns the value directly. Use it in any hook::

      def main(ctx):
          state = ctx.resources.read("working-state:support-control")

* ``await ctx.resources.aread(handle)`` is the same read as a coroutine, for an ``async def``
  hook that prefers to await (as the reference's ``await resources.read(...)`` does)::

      async def main(ctx):
          state = await ctx.resources.aread("working-state:support-control")

``read`` never hands back an awaitable: a value that is sometimes a value and sometimes a
coroutine is the surprise this avoids; ``await ctx.resources.read(...)`` is therefore a
``TypeError``, like awaiting any plain value. The ``a`` prefix follows the convention of Python
libraries that offer both forms (``get``/``aget``).

A handle is the resource's identity string (``"working-state:<id>"``, ``"blackboard:<id>"``,
``"memory:<memoryId>:<blockId>"``), a mapping with an ``identity`` (or ``id``) key, or any object
with an ``identity`` (or ``id``) attribute holding that string.

Only declared resources can be read. The first read of a handle pins its value: every later read
in this boundary returns the same value, each time as a fresh copy, so changing what one read
returned cannot change what the next read returns. A readable resource with no value reads as
``None``. Each successful read is recorded once, in the order the reads completed
(:meth:`Resources.reads`); the engine turns the identities into ``{identity, revision, valueHash}``.
A read that cannot produce a value raises :class:`ResourceReadError` with ``reason``
``undeclared`` (not in the declared graph), ``unresolved``, ``storage-unavailable`` or
``unauthorized``; a hook may catch it and fall back, and one it does not catch fails the step with
that reason.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final

RESOURCE_READ_REASONS: Final = ("undeclared", "unresolved", "storage-unavailable", "unauthorized")
PREPARATION_REASONS: Final = ("callback", "timeout", "aborted")
# The failure modes a declared resource can have; "undeclared" is what reading any other gives.
DECLARED_FAILURES: Final = ("unresolved", "storage-unavailable", "unauthorized")

_ALIASES: Final = {"tool_history": "toolHistory"}


class ResourceReadError(Exception):
    """A resource read that produced no value; ``reason`` is one of ``RESOURCE_READ_REASONS``.

    The message is content-free, as the reference's is; ``identity`` names the resource when the
    handle named one.
    """

    def __init__(self, reason: str, identity: str | None = None) -> None:
        if reason not in RESOURCE_READ_REASONS:
            raise ValueError(
                f"a resource read fails with one of {', '.join(RESOURCE_READ_REASONS)}, "
                f"not {reason!r}"
            )
        super().__init__(f"Preparation resource read failed: {reason}.")
        self.reason = reason
        self.identity = identity


class PreparationError(Exception):
    """The step preparation failed; ``reason`` is ``callback``, ``timeout`` or ``aborted``.

    A hook may raise it itself: the reference passes it through with the hook's own reason.
    """

    def __init__(self, reason: str) -> None:
        if reason not in PREPARATION_REASONS:
            raise ValueError(
                f"preparation fails with one of {', '.join(PREPARATION_REASONS)}, not {reason!r}"
            )
        super().__init__(f"Request preparation failed: {reason}.")
        self.reason = reason


class SysLambdaError(Exception):
    """A nested lambda (``adf.sys_lambda``) failed or is not allowed; the call fails closed."""


def error_details(exc: BaseException) -> dict[str, Any] | None:
    """The contract facts of a step failure the hook raised, for the worker's report.

    ``{"error": "ResourceReadError", "reason", "identity"}`` or ``{"error": "PreparationError",
    "reason"}``; ``None`` for any other exception (the engine reports those as ``callback``).
    """
    if isinstance(exc, ResourceReadError):
        return {"error": "ResourceReadError", "reason": exc.reason, "identity": exc.identity}
    if isinstance(exc, PreparationError):
        return {"error": "PreparationError", "reason": exc.reason}
    return None


def handle_identity(handle: Any) -> str | None:
    """The identity a handle names, or ``None`` when it names none (reading it is undeclared)."""
    if isinstance(handle, str):
        return handle
    try:
        if isinstance(handle, Mapping):
            found = handle.get("identity", handle.get("id"))
        else:
            found = getattr(handle, "identity", None)
            if found is None:
                found = getattr(handle, "id", None)
    except Exception:
        return None
    return found if isinstance(found, str) else None


class Resources:
    """The read-only resource mediator of one boundary (see the module docstring)."""

    __slots__ = ("_declared", "_pinned", "_reads")

    def __init__(self, declared: Iterable[Mapping[str, Any]] = ()) -> None:
        """``declared``: ``{"identity", "value"}`` or ``{"identity", "failure"}`` entries.

        Raises ``ValueError`` for an entry that is neither, or a value that is not JSON.
        """
        self._declared: dict[str, tuple[str, str]] = {}
        for entry in declared:
            identity = entry.get("identity")
            if not isinstance(identity, str):
                raise ValueError("a declared resource needs an identity string")
            if "failure" in entry:
                failure = entry["failure"]
                if failure not in DECLARED_FAILURES:
                    raise ValueError(
                        f"a declared resource fails with one of {', '.join(DECLARED_FAILURES)}, "
                        f"not {failure!r}"
                    )
                self._declared[identity] = ("failure", failure)
            elif "value" in entry:
                self._declared[identity] = ("value", _frozen(entry["value"]))
            else:
                raise ValueError(
                    f"declared resource {identity!r} has neither a value nor a failure"
                )
        self._pinned: dict[str, str] = {}
        self._reads: list[str] = []

    def read(self, handle: Any) -> Any:
        """The pinned value of a declared resource; raises :class:`ResourceReadError`."""
        identity = handle_identity(handle)
        found = self._declared.get(identity) if identity is not None else None
        if found is None:
            raise ResourceReadError("undeclared", identity)
        kind, payload = found
        if kind == "failure":
            raise ResourceReadError(payload, identity)
        assert identity is not None
        pinned = self._pinned.get(identity)
        if pinned is None:
            pinned = self._pinned[identity] = payload
            self._reads.append(identity)
        return json.loads(pinned)

    async def aread(self, handle: Any) -> Any:
        """:meth:`read` as a coroutine, for ``await`` in an ``async def`` hook."""
        return self.read(handle)

    def reads(self) -> list[str]:
        """The identities read so far, each once, in the order the reads completed."""
        return list(self._reads)

    def declared(self) -> list[str]:
        """The identities of the declared graph, readable or not."""
        return list(self._declared)

    def __contains__(self, handle: object) -> bool:
        identity = handle_identity(handle)
        return identity is not None and identity in self._declared

    def __repr__(self) -> str:
        return f"Resources(declared={self.declared()!r}, read={self._reads!r})"


CONTEXT_KINDS: Final = ("step", "invocation")
"""The boundaries whose hooks get this context; its messages name the one it serves."""


class StepContext:
    """The read-only step context: ``ctx.name`` and ``ctx["name"]`` give the same value.

    An invocation hook gets the same object, made with ``kind="invocation"``: it holds the
    invocation's frozen context, and its messages call it the invocation context."""

    __slots__ = ("_data", "_kind", "_resources")
    _data: dict[str, Any]
    _kind: str
    _resources: Resources

    def __init__(
        self,
        context: Mapping[str, Any],
        resources: Resources | None = None,
        *,
        kind: str = "step",
    ) -> None:
        if kind not in CONTEXT_KINDS:
            raise ValueError(f"a context is one of {', '.join(CONTEXT_KINDS)}, not {kind!r}")
        object.__setattr__(self, "_data", dict(context))
        object.__setattr__(self, "_kind", kind)
        object.__setattr__(self, "_resources", resources if resources is not None else Resources())

    @property
    def resources(self) -> Resources:
        return self._resources

    def __getitem__(self, key: str) -> Any:
        if key == "resources":
            return self._resources
        return self._data[_ALIASES.get(key, key)]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError:
            fields = ", ".join(self.keys())
            raise AttributeError(
                f"the {self._kind} context has no field {name!r} (fields: {fields})"
            ) from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"the {self._kind} context is read-only: return an amendment instead")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"the {self._kind} context is read-only")

    def __contains__(self, key: object) -> bool:
        return key == "resources" or key in self._data or key in _ALIASES

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self.keys())

    def keys(self) -> list[str]:
        return [*self._data, "resources"]

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default

    def to_dict(self) -> dict[str, Any]:
        """A copy of the JSON part of the context (everything but ``resources``)."""
        copied: dict[str, Any] = json.loads(json.dumps(self._data))
        return copied

    def __repr__(self) -> str:
        shown = {k: self._data[k] for k in ("operation", "index", "reason") if k in self._data}
        inner = ", ".join(f"{k}={v!r}" for k, v in shown.items())
        return f"{self._kind.title()}Context({inner})"


def step_context_for_worker(payload: Mapping[str, Any], kind: str = "step") -> StepContext:
    """The hook's argument from the engine's ``{"context", "resources"}`` payload; ``kind``
    names the boundary (the call's ``context`` option)."""
    context = payload.get("context")
    if not isinstance(context, Mapping):
        raise ValueError(f"a {kind} worker payload needs a 'context' object")
    return StepContext(context, Resources(payload.get("resources") or ()), kind=kind)


def _frozen(value: Any) -> str:
    """The value as JSON text: every read parses a fresh copy of it."""
    try:
        return json.dumps(value, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError) as exc:
        raise ValueError(f"a declared resource value must be JSON: {exc}") from exc
