"""SimulationService: the engine and plot off the event loop, bounded, with errors in users' words."""

from __future__ import annotations

import asyncio

import pytest

from bot.errors import UserError
from bot.sim.compute import MIN_TRIALS, describe_field, prepare
from bot.sim.service import MAX_PENDING, SimulationService
from engine import limits

# Models with 10D6 attacks each (at most 60 dice a model) just beyond the exact engine's dice limit.
OVER_EXACT = limits.MAX_ATTACK_DICE_EXACT // 60 + 1


def request(attacks: int | str = 10, models: int = 1, method: str = "exact", **target) -> dict:
    return {
        "edition": "11e",
        "method": method,
        "volley": [
            {
                "models": models,
                "weapon": {
                    "name": "gun",
                    "range": 24,
                    "attacks": attacks,
                    "skill": 3,
                    "strength": 4,
                    "ap": 0,
                    "damage": 1,
                    "keywords": [],
                },
            }
        ],
        "target": {"models": 10, "toughness": 4, "save": 4, "invulnerable": None, "wounds": 1, **target},
    }


@pytest.fixture
async def service():
    svc = SimulationService()
    yield svc
    svc.close()


async def test_run_returns_result_and_png(service: SimulationService) -> None:
    result, png = await service.run(request())
    assert result["models_killed"]["mean"] == pytest.approx(10 / 6, abs=1e-9)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert service.admitted == 0


async def test_engine_errors_become_user_errors_with_the_field(service: SimulationService) -> None:
    with pytest.raises(UserError) as caught:
        await service.run(request(toughness=0))
    assert caught.value.field == "target.toughness"
    assert str(caught.value).startswith("target T:")
    assert service.admitted == 0


async def test_admission_is_bounded(service: SimulationService) -> None:
    outcomes = await asyncio.gather(
        *(service.run(request()) for _ in range(MAX_PENDING + 3)), return_exceptions=True
    )
    busy = [o for o in outcomes if isinstance(o, UserError)]
    assert len(busy) >= 3 and all("busy" in str(b) for b in busy)
    assert sum(not isinstance(o, BaseException) for o in outcomes) >= 1
    await asyncio.sleep(0)
    assert service.admitted == 0


async def test_closed_service_refuses_work() -> None:
    svc = SimulationService()
    svc.close()
    svc.close()  # twice is fine
    with pytest.raises(UserError, match="shutting down"):
        await svc.run(request())


def test_prepare_budgets_monte_carlo_trials_for_chat() -> None:
    small, notes = prepare(request(method="montecarlo"))
    assert small["trials"] == 100_000 and notes == []
    big, notes = prepare(request(attacks="10D6", models=OVER_EXACT, method="montecarlo"))
    assert MIN_TRIALS <= big["trials"] < 100_000
    assert notes and "reduced" in notes[0]
    explicit, _ = prepare({**request(method="montecarlo"), "trials": 5000})
    assert explicit["trials"] == 5000


def test_prepare_suggests_monte_carlo_only_for_size_refusals() -> None:
    with pytest.raises(UserError, match="method: montecarlo"):
        prepare(request(attacks="10D6", models=OVER_EXACT))
    with pytest.raises(UserError) as caught:
        prepare(request(attacks="D7"))
    assert "montecarlo" not in str(caught.value) and caught.value.field == "volley[0].weapon.attacks"


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ("volley[0].weapon.attacks", "weapon 1 A"),
        ("volley[2].weapon.skill", "weapon 3 BS/WS"),
        ("volley[1].models", "weapon 2 models"),
        ("volley[0].weapon.keywords[1]", "weapon 1 kw"),
        ("volley", "volley"),
        ("target.save", "target Sv"),
        ("target.invulnerable", "target inv"),
        ("context.hit_modifier", "hit_modifier"),
        ("", None),
    ],
)
def test_describe_field(path: str, words: str | None) -> None:
    assert describe_field(path) == words


async def test_at_most_two_simulations_per_user_and_four_per_server_at_a_time() -> None:
    """Issue 19: one user cannot hold every worker; the next simulation is told to wait, not queued."""
    from bot.sim.service import PER_GUILD, PER_USER

    service = SimulationService(workers=0)
    try:
        with service.callers.admit(1, 10), service.callers.admit(1, 10):
            with pytest.raises(UserError, match=f"You have {PER_USER} simulations running: wait"):
                await service.run(request(), with_plot=False, user=1, guild=11)
            result, _ = await service.run(request(), with_plot=False, user=2, guild=10)
            assert result["models_killed"]
            with service.callers.admit(2, 10), service.callers.admit(3, 10), pytest.raises(
                    UserError, match=f"{PER_GUILD} simulations are running in this server"):
                await service.run(request(), with_plot=False, user=4, guild=10)
        assert service.callers.in_flight == 0 and service.admitted == 0
        result, _ = await service.run(request(), with_plot=False, user=1, guild=10)
        assert result["models_killed"]
    finally:
        service.close()
