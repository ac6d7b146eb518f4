"""`python -m engine [FILE|-]` (contract 1) through a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
REQ = {"edition": "10e",
       "volley": [{"models": 1, "weapon": {"name": "Autoch-pattern bolter", "range": 24, "attacks": 2, "skill": 4,
                                           "strength": 4, "ap": 0, "damage": 1, "keywords": []}}],
       "target": {"models": 3, "toughness": 5, "save": 4, "invulnerable": 4, "wounds": 4}}


def run(args, stdin: str | None = None):
    return subprocess.run([sys.executable, "-m", "engine", *args], input=stdin, capture_output=True, text=True,
                          cwd=ROOT, timeout=60)


def test_stdin_single_request():
    p = run(["-"], json.dumps(REQ))
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["edition"] == "10e" and out["method"] == "exact"
    assert set(out) >= {"stages", "models_killed", "damage", "p_wipe", "attacker_mortal_wounds", "ignored_keywords",
                        "notes"}
    assert sum(out["models_killed"]["pmf"]) == pytest.approx(1.0)


def test_file_and_list(tmp_path):
    f = tmp_path / "req.json"
    f.write_text(json.dumps([REQ, dict(REQ, edition="11e", method="montecarlo", trials=1000, seed=1)]))
    p = run([str(f)])
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert [o["method"] for o in out] == ["exact", "montecarlo"]
    assert "standard_error" in out[1]


def test_no_argument_reads_stdin():
    assert run([], json.dumps(REQ)).returncode == 0


@pytest.mark.parametrize(("stdin", "field"), [
    ("{not json", ""),
    ("", ""),
    (json.dumps(dict(REQ, target=dict(REQ["target"], toughness=0))), "target.toughness"),
    (json.dumps([REQ, dict(REQ, volley=[{"weapon": dict(REQ["volley"][0]["weapon"], attacks="999D6")}])]),
     "[1].volley[0].weapon.attacks"),
    (json.dumps([]), ""),
])
def test_invalid_input_exit_2(stdin, field):
    p = run(["-"], stdin)
    assert p.returncode == 2
    err = json.loads(p.stdout)
    assert set(err) == {"error", "field"} and err["field"] == field and err["error"]
    assert "Traceback" not in p.stderr


def test_missing_file():
    p = run(["/nonexistent/req.json"])
    assert p.returncode == 2
    assert "cannot read" in json.loads(p.stdout)["error"]


@pytest.mark.parametrize("digits", [4_001, 4_301, 100_000])
@pytest.mark.parametrize("where", ["toughness", "wounds_lost", "damage"])
def test_huge_integers_are_refused_unconverted_and_echoed_short(digits, where):
    """Regression (issue 9): >4,300 digits gave rc 1 + traceback; 4,001 digits were echoed in full."""
    req = json.loads(json.dumps(REQ))
    if where == "damage":
        req["volley"][0]["weapon"]["damage"] = "@HUGE@"
        field = "volley[0].weapon.damage"
    else:
        req["target"][where] = "@HUGE@"
        field = f"target.{where}"
    sign = "-" if where == "wounds_lost" else ""
    text = json.dumps(req).replace('"@HUGE@"', sign + "9" * digits)
    p = run(["-"], text)
    assert p.returncode == 2, p.stderr
    assert not p.stderr
    err = json.loads(p.stdout)
    assert err["field"] == field
    assert f"({digits:,} digits)" in err["error"] and len(err["error"]) < 200


def test_python_callers_with_huge_ints_get_a_short_request_error():
    from engine import RequestError, validate

    bad = json.loads(json.dumps(REQ))
    bad["target"]["toughness"] = 10**5000
    with pytest.raises(RequestError) as info:
        validate(bad)
    assert len(info.value.message) < 100 and info.value.field == "target.toughness"
    bad = json.loads(json.dumps(REQ))
    bad["volley"][0]["weapon"]["damage"] = -(10**5000)
    with pytest.raises(RequestError) as info:
        validate(bad)
    assert len(info.value.message) < 100
