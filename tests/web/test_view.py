"""The page model built from a contract-4 export: mission, per-round score, clocks, bounded text."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bot.web.view import TEXT_MAX, overlay_view


def export(**extra):  # noqa: ANN003, ANN201
    base = {
        "game_id": 1, "status": "active", "edition": "11e", "round": 2, "phase": "shooting", "active_player": 222,
        "players": [{"user_id": 111, "name": "Alice", "faction": "Votann", "cp": 3, "vp": 17},
                    {"user_id": 222, "name": "Bob", "faction": "Orks", "cp": 1, "vp": 9}],
        "log": [{"seq": i, "summary": f"event {i}", "undone": i == 9} for i in range(1, 11)],
    }
    return base | extra


def test_mission_rounds_and_clock() -> None:
    view = overlay_view(export(
        mission={"name": "Battlefield Dominance", "deployment": "Crucible of Battle", "primary": "Hold objectives"},
        vp_by_round=[{"round": 1, "player": 111, "primary": 5, "secondary": 3, "other": 0},
                     {"round": 1, "player": 222, "primary": 4, "secondary": 0, "other": 0},
                     {"round": 2, "player": 111, "primary": 6, "secondary": 3, "other": 0},
                     {"round": 2, "player": 222, "primary": 0, "secondary": 5, "other": 0}],
        clock={"running": True, "holder": 222, "stopped": False, "remaining_s": {"111": 1500.0, "222": 1320.5}},
    ), now=1000.0)
    alice, bob = view["players"]
    assert (alice["primary"], alice["secondary"], alice["other"]) == (11, 6, 0)
    assert (bob["primary"], bob["secondary"], bob["other"]) == (4, 5, 0)
    assert [r["round"] for r in view["rounds"]] == [1, 2]
    assert view["rounds"][1]["scores"]["222"]["secondary"] == 5
    assert (alice["clock_running"], bob["clock_running"], bob["clock_s"]) == (False, True, 1320.5)
    assert view["mission"]["deployment"] == "Crucible of Battle"
    assert (view["phase"], view["active"]) == ("Shooting", "Bob")
    assert [e["seq"] for e in view["log"]] == [5, 6, 7, 8, 10]  # the newest LOG_LINES still in effect


def test_without_mission_play_vp_counts_as_other() -> None:
    view = overlay_view(export())
    assert view["mission"] is None
    assert [p["other"] for p in view["players"]] == [17, 9]
    assert all(p["clock_s"] is None for p in view["players"])


@given(st.text(max_size=5000), st.integers(-10**12, 10**12))
def test_hostile_text_and_numbers_are_bounded(text: str, number: int) -> None:
    hostile = export(players=[{"user_id": 1, "name": text, "faction": text, "cp": number, "vp": number},
                              {"user_id": 2, "name": text, "faction": text, "cp": 0, "vp": 0}],
                     active_player=1, round=number, mission={"name": text, "deployment": text, "primary": text},
                     log=[{"seq": 1, "summary": text}])
    view = overlay_view(hostile)
    assert len(view["players"][0]["name"]) <= TEXT_MAX and len(view["mission"]["name"]) <= TEXT_MAX
    assert len(view["rounds"]) <= 10
    view["players"][0]["name"].encode("utf-8")  # no lone surrogates reach the JSON stream
