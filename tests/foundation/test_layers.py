"""The house stays one-way (issue 20): no import cycle, no import running back up a floor or sideways into
another room of the same floor, no cog importing a cog, every module on a recorded floor, and the floors
recorded in docs/architecture.md as the test knows them. The drawing is tests/foundation/layers.py."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.foundation.layers import REPO, draw, floors_table

ARCHITECTURE = REPO / "docs" / "architecture.md"


def test_no_import_cycle_nothing_runs_back_up_no_cog_imports_a_cog() -> None:
    drawing = draw()
    assert not drawing.unplaced, f"modules on no floor (add them to FLOORS and docs/architecture.md): {drawing.unplaced}"
    assert not drawing.cycles, f"import cycles: {drawing.cycles}"
    assert not drawing.back_up, f"imports running back up or sideways: {drawing.back_up}"
    assert not drawing.cog_to_cog, f"cogs importing cogs (move the shared part to bot/discord_glue/): {drawing.cog_to_cog}"


def test_the_floors_are_recorded_in_the_architecture_notes() -> None:
    assert floors_table() in ARCHITECTURE.read_text(encoding="utf-8")


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    for package in ("bot", "cogs", "engine"):
        (root / package).mkdir(exist_ok=True)
        (root / package / "__init__.py").touch()
    return root


def test_the_drawing_sees_each_kind_of_fault(tmp_path: Path) -> None:
    """The guard itself: a cycle through an import inside a function, an import back up a floor, a sideways
    import between rooms of one floor, and a cog importing a cog are each found; a clean tree has none."""
    root = _tree(tmp_path, {
        "bot/sim/pool.py": "from bot.sim import worker\n",
        "bot/sim/worker.py": "def run():\n    from bot.sim.pool import Pool\n",
        "bot/units/build.py": "import bot.sim.requests\n",
        "bot/sim/requests.py": "",
        "bot/web/links.py": "from bot.sim.requests import x\n",
        "cogs/army.py": "from cogs.game import reply\n",
        "cogs/game.py": "from bot.errors import UserError\n",
        "bot/errors.py": "",
    })
    drawing = draw(root)
    assert drawing.cycles == [["bot.sim.pool", "bot.sim.worker"]]
    assert ("bot.units.build", "bot.sim.requests") in drawing.back_up
    assert ("bot.web.links", "bot.sim.requests") in drawing.back_up
    assert drawing.cog_to_cog == [("cogs.army", "cogs.game")]
    assert drawing.unplaced == []

    clean = _tree(tmp_path / "clean", {"bot/sim/pool.py": "from bot.sim import worker\n", "bot/sim/worker.py": "",
                                       "cogs/game.py": "from bot.sim.pool import Pool\n"})
    drawing = draw(clean)
    assert (drawing.cycles, drawing.back_up, drawing.cog_to_cog) == ([], [], [])
    assert drawing.graph["cogs.game"] == {"bot.sim.pool"}


def test_a_module_on_no_floor_is_reported(tmp_path: Path) -> None:
    drawing = draw(_tree(tmp_path, {"bot/newthing.py": ""}))
    assert drawing.unplaced == ["bot.newthing"]
