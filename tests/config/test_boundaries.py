"""app.config is imported by every CLI command: it must stay free of heavy imports."""

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_importing_and_loading_pulls_in_no_front_end_or_provider() -> None:
    script = (
        "import json, sys, pathlib, tempfile\n"
        "from app.config import load_config\n"
        "load_config(pathlib.Path(tempfile.mkdtemp()), env={})\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('textual', 'litellm', 'rich', 'app'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, check=True, timeout=60
    )

    loaded = json.loads(done.stdout)
    stdlib_only = {"app", "app.core", "app.core.errors", "app.core.boundedjson", "app.core.file_kinds", "app.core.config_paths"}
    assert all(name in stdlib_only or name.startswith("app.config") for name in loaded), loaded
