"""Where the repository's own files are, for tests that read them."""

from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
BUNDLED_WORKSPACE = REPOSITORY / "resources" / "sample-workspace"
