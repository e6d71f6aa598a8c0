"""`hermes-tui doctor model [--json]`: the model probe from the command line, against the
scripted OpenAI-protocol server; plain `doctor` is unchanged."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import run
from tests.support.fake_openai import REFUSAL, FakeOpenAI


def _configured(home: Path, fake: FakeOpenAI) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(fake.model_config("test-model"))


def test_doctor_model_json_classifies_each_request(cli_env, home: Path, fake: FakeOpenAI) -> None:
    _configured(home, fake)
    fake.mode = "stream-broken"
    out = run(cli_env, "doctor", "model", "--json")
    assert out.returncode == 1, out.stderr  # streamed, the agent would lose its calls
    report = json.loads(out.stdout)
    assert [(r["request"], r["stream"], r["class"]) for r in report["requests"]] == [
        ("minimal", True, "stream-broken"),
        ("minimal", False, "native"),
        ("agent", True, "stream-broken"),
        ("agent", False, "native"),
    ]
    assert all(r["detail"] for r in report["requests"])
    assert len(report["advice"]) == 1 and "streaming off" in report["advice"][0]
    assert "test-model" in report["endpoint"]


def test_doctor_model_prints_findings_and_advice(cli_env, home: Path, fake: FakeOpenAI) -> None:
    _configured(home, fake)
    fake.mode = "refused"
    out = run(cli_env, "doctor", "model")
    assert out.returncode == 1
    lines = out.stdout.splitlines()
    assert lines[0].startswith("model     test-model")
    assert lines[1].split()[:3] == ["minimal,", "streamed", "refused"] and REFUSAL in lines[1]
    assert sum(" refused " in line for line in lines if not line.startswith("- ")) == 4
    assert any(line.startswith("- refused (") for line in lines)


def test_doctor_model_passes_a_conforming_endpoint(cli_env, home: Path, fake: FakeOpenAI) -> None:
    _configured(home, fake)
    fake.mode = "text-fence"  # written as text: hermes-tui runs it, and says what to change
    out = run(cli_env, "doctor", "model", "--json")
    assert out.returncode == 0, out.stderr
    assert {r["class"] for r in json.loads(out.stdout)["requests"]} == {"text"}
    fake.mode = "native"
    assert run(cli_env, "doctor", "model").returncode == 0
    assert run(cli_env, "doctor").stdout.startswith("home ")  # plain doctor as before
    assert len(fake.requests) == 8  # plain doctor sent nothing
