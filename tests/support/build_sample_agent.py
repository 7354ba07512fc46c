"""Build the bundled ADF agent, ``resources/sample-agent.adf``, and its studio folder
(``resources/sample-agent.adf.hookstudio/``: settings and one sample), with the fixture builder.

    .venv/bin/python -m tests.support.build_sample_agent [--force]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from tests.support.adf_files import AdfSpec, build_adf
from tests.support.paths import BUNDLED_WORKSPACE

RESOURCES = Path(__file__).resolve().parents[2] / "resources"
AGENT = RESOURCES / "sample-agent.adf"
STATE = RESOURCES / "sample-agent.adf.hookstudio"
SAMPLE = "support-ticket"


def build(agent: Path = AGENT, state: Path | None = None) -> Path:
    """Write the agent file (which must not exist) and its studio folder beside it."""
    state = state or agent.with_name(agent.name + ".hookstudio")
    build_adf(agent, AdfSpec(schema=29))
    (state / "samples").mkdir(parents=True, exist_ok=True)
    settings = {"version": 1, "loops": ["researcher"]}
    (state / "hookstudio.json").write_text(json.dumps(settings, indent=2) + "\n", "utf-8")
    shutil.copyfile(
        BUNDLED_WORKSPACE / "samples" / f"{SAMPLE}.json", state / "samples" / f"{SAMPLE}.json"
    )
    return agent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--force", action="store_true", help="replace an existing agent file")
    args = parser.parse_args()
    if AGENT.exists():
        if not args.force:
            print(f"{AGENT} exists; --force replaces it", file=sys.stderr)
            return 1
        AGENT.unlink()
    print(build())
    return 0


if __name__ == "__main__":
    sys.exit(main())
