"""The host calls of a run in the record store: the run record keeps them content-free (method,
gate, where the reply came from, error code, depth, duration), the payload keeps what they
carried; a store written before calls were kept is upgraded with none."""

from __future__ import annotations

import json
import sqlite3

from studio.core.records.store import SCHEMA_VERSION, RecordStore
from studio.core.run_outcome import CallError, HostCall, RunOutcome
from studio.core.turn_error import HookRef

SECRET = "S3CRET-CONTENT"
HOOK = HookRef(source="lib/probe.ts", function="main", contract="pre_llm")
CALLS = [
    HostCall(
        method="fs_read",
        args={"path": SECRET},
        answered_by="sample /adf/replies/fs_read/0",
        reply={"text": SECRET},
        duration_ms=1.5,
    ),
    HostCall(
        method="sys_lambda",
        args={"source": "lib/x.py", "args": {"q": SECRET}},
        answered_by="lib/x.py:main",
        reply=f"1\n\nOutput:\n{SECRET}",
        output=f"{SECRET}\n",
        duration_ms=20.0,
    ),
    HostCall(
        method="attestation_issue",
        args={},
        gate="authorization",
        error=CallError(code="REQUIRES_AUTHORIZED_CODE", message=f"no {SECRET}"),
        depth=1,
        duration_ms=0.25,
    ),
]


def run_with_calls() -> RunOutcome:
    request = {"system": "s", "messages": [{"role": "user", "content": "x"}], "tools": []}
    return RunOutcome(
        contract="pre_llm",
        status="ok",
        sample="basic",
        loop="main",
        hook=HOOK,
        input={**request, "options": {}},
        result={**request, "options": {}},
        calls=CALLS,
    )


def test_the_record_keeps_the_calls_content_free_and_the_payload_the_rest(tmp_path):
    run = run_with_calls()
    with RecordStore(tmp_path / "records.sqlite3") as store:
        store.add(run)
        stored = store.get(run.run_id)
        assert stored.outcome() == run
        assert stored.record["calls"] == [
            {
                "method": "fs_read",
                "gate": "allowed",
                "answered_by": "sample /adf/replies/fs_read/0",
                "code": None,
                "depth": 0,
                "duration_ms": 1.5,
            },
            {
                "method": "sys_lambda",
                "gate": "allowed",
                "answered_by": "lib/x.py:main",
                "code": None,
                "depth": 0,
                "duration_ms": 20.0,
            },
            {
                "method": "attestation_issue",
                "gate": "authorization",
                "answered_by": None,
                "code": "REQUIRES_AUTHORIZED_CODE",
                "depth": 1,
                "duration_ms": 0.25,
            },
        ]
        assert SECRET not in json.dumps(stored.record)

        store.clear_payloads([run.run_id])
        cleared = store.get(run.run_id).outcome()
    assert [(c.method, c.gate, c.depth) for c in cleared.calls] == [
        ("fs_read", "allowed", 0),
        ("sys_lambda", "allowed", 0),
        ("attestation_issue", "authorization", 1),
    ]
    assert [c.error.code if c.error else None for c in cleared.calls] == [
        None,
        None,
        "REQUIRES_AUTHORIZED_CODE",
    ]
    assert SECRET not in cleared.model_dump_json()


def test_a_store_from_before_calls_were_kept_is_upgraded_with_none(tmp_path):
    path = tmp_path / "records.sqlite3"
    run = run_with_calls()
    with RecordStore(path) as store:
        store.add(run)
    # The file as the previous schema left it: no calls column, version 1.
    db = sqlite3.connect(path)
    try:
        db.execute("ALTER TABLE decisions DROP COLUMN calls")
        db.execute("PRAGMA user_version = 1")
        db.commit()
    finally:
        db.close()
    with RecordStore(path) as upgraded:
        assert upgraded.schema_version == SCHEMA_VERSION == 2
        stored = upgraded.get(run.run_id)
        assert stored.record["calls"] == []
        # The payload still holds what the calls carried, but without their record they are gone.
        assert stored.outcome().calls == []
        again = run_with_calls()
        upgraded.add(again)
        assert upgraded.get(again.run_id).outcome() == again
