"""Read a register entry as the Inspect Evals register does, with whichever inspect-evals is
first on the path: `python -m tests.support.register_check ENTRY NAME` puts ENTRY at
`register/NAME/eval.yaml` of a scratch checkout, loads the listing with the register's own
loader (ExternalEvalMetadata for an entry with a `source`), checks each asset of
`metadata.extras.external_assets` (which an external entry keeps as free extras) with the
register's asset model (ExternalAsset), and prints what it read as JSON, or the validation
error on stderr with exit status 1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path
from typing import Any


def main(entry: Path, name: str) -> int:
    import inspect_evals
    from inspect_evals.metadata import ExternalAsset, load_listing

    with tempfile.TemporaryDirectory() as scratch:
        package = Path(scratch) / "src" / "inspect_evals"  # holds no internal evals
        package.mkdir(parents=True)
        target = Path(scratch) / "register" / name / "eval.yaml"
        target.parent.mkdir(parents=True)
        target.write_text(entry.read_text(encoding="utf-8"), encoding="utf-8")
        try:
            (found,) = load_listing(package).evals
            extras = found.runtime_metadata.extras if found.runtime_metadata else {}
            (asset,) = extras["external_assets"]
            ExternalAsset(**asset)
        except Exception as exc:  # the register's refusal, whatever its type
            print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
            return 1
    (task,) = found.tasks
    report = found.evaluation_report
    print(
        json.dumps(
            {
                "inspect_evals": getattr(inspect_evals, "__version__", None)
                or version("inspect-evals"),
                "loaded_from": str(Path(inspect_evals.__file__).parent),
                "kind": type(found).__name__,
                "id": found.id,
                "task": task.name,
                "samples": task.dataset_samples,
                "human_baseline": task.human_baseline is not None,
                "asset": asset,
                "results": [(r.task, r.model) for r in report.results] if report else [],
            }
        )
    )
    return 0


def read_by_register(entry: Path, name: str, path: Path | None) -> tuple[int, dict[str, Any], str]:
    """The entry read by the inspect-evals at `path` (None: the one installed, pinned)."""
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(path), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-m", "tests.support.register_check", str(entry), name],
        env=env, capture_output=True, text=True, timeout=300,
        cwd=Path(__file__).resolve().parents[2],
    )  # fmt: skip
    return done.returncode, json.loads(done.stdout or "{}"), done.stderr


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), sys.argv[2]))
