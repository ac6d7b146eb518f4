"""/sim through the console: the real CommandTree, the real engine, the real plot."""

from __future__ import annotations

import io

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from bot.console.session import ConsoleSession
from engine import limits

CUSTOM = '/sim custom attacker:A=D6+2 BS=3 S=14 AP=-3 D=D6+2 kw="BLAST 2" target:T=5 Sv=4 W=4 inv=4 models=3'


def only(replies, kind: str):
    found = [r for r in replies if r.kind == kind]
    assert len(found) == 1, [r.to_json() for r in replies]
    return found[0]


def field_values(reply) -> dict[str, str]:
    return {f["name"]: f["value"] for f in reply.embeds[0]["fields"]}


async def test_custom_defers_then_follows_up_with_embed_and_png(console: ConsoleSession) -> None:
    replies = await console.send(CUSTOM)
    assert [r.kind for r in replies] == ["defer", "followup"]
    assert replies[0].ephemeral is False
    answer = replies[1]
    assert answer.files == ["sim.png"]
    image = Image.open(io.BytesIO(answer.file_data["sim.png"]))
    assert image.format == "PNG" and image.size == (800, 450)
    embed = answer.embeds[0]
    assert embed["image"] == "attachment://sim.png"
    values = field_values(answer)
    assert values["Expected kills"].endswith("of 3")
    assert values["P(wipe)"].startswith("**") and values["P(wipe)"].endswith("%**")
    assert "wounds" in values["Expected damage"]
    assert values["Keywords applied"] == "BLAST 2"
    assert embed["footer"].startswith("11th edition · Ad-hoc profiles · exact")
    assert "3 × target — T 5 · Sv 4+ · 4++ · W 4" in embed["description"]


async def test_custom_numbers_match_the_engine(console: ConsoleSession) -> None:
    from engine import simulate

    replies = await console.send(
        "/sim custom attacker:A=10 BS=3 S=4 AP=0 D=1 target:T=4 Sv=4 W=1 models=10 edition:10e"
    )
    answer = only(replies, "followup")
    result = simulate(
        {
            "edition": "10e",
            "volley": [
                {
                    "models": 1,
                    "weapon": {
                        "name": "w",
                        "range": 24,
                        "attacks": 10,
                        "skill": 3,
                        "strength": 4,
                        "ap": 0,
                        "damage": 1,
                        "keywords": [],
                    },
                }
            ],
            "target": {"models": 10, "toughness": 4, "save": 4, "invulnerable": None, "wounds": 1},
        }
    )
    # 10 attacks, hit 3+ (2/3), wound 4+ (1/2), save 4+ fails 1/2: 10 * 2/3 * 1/2 * 1/2 = 5/3 kills.
    assert result["models_killed"]["mean"] == pytest.approx(10 / 6, abs=1e-9)
    assert field_values(answer)["Expected kills"] == "**1.67** of 10"
    assert answer.embeds[0]["footer"].startswith("10th edition")


async def test_custom_options_are_passed_and_shown(console: ConsoleSession) -> None:
    replies = await console.send(
        "/sim custom attacker:A=10 BS=3 S=4 D=1 target:T=4 Sv=4 W=1 models=10 "
        "hit_mod:1 reroll_wounds:ones cover:true method:montecarlo"
    )
    answer = only(replies, "followup")
    assert "target in cover" in answer.embeds[0]["description"]
    assert "wounds: re-roll 1s" in answer.embeds[0]["description"]
    assert "Monte Carlo" in answer.embeds[0]["footer"]


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("/sim custom attacker:A=D7 BS=3 S=4 D=1 target:T=4 Sv=3 W=1", "attacker `A`"),
        ("/sim custom attacker:A=3 BS=3 S=4 D=1 target:T=0 Sv=3 W=1", "target `T`"),
        ("/sim custom attacker:A=3 BS=3 S=4 D=1 target:T=4 Sv=1+ W=1", "target `Sv`"),
        ("/sim custom attacker:A=-1 BS=3 S=4 D=1 target:T=4 Sv=3 W=1", "attacker `A`"),
        ("/sim custom attacker:A=999D6 BS=3 S=4 D=1 target:T=4 Sv=3 W=1", "attacker `A`"),
        ("/sim custom attacker:A=lots BS=3 S=4 D=1 target:T=4 Sv=3 W=1", "attacker `A`"),
        ("/sim custom attacker:A=3 BS=3 S=4 D=1 target:T=4 Sv=3", "target `W`"),
        ("/sim custom attacker:hello target:T=4 Sv=3 W=1", "NAME=VALUE"),
    ],
)
async def test_bad_profiles_get_an_ephemeral_error_naming_the_field(
    console: ConsoleSession, line: str, words: str
) -> None:
    replies = await console.send(line)
    assert len(replies) == 1, [r.to_json() for r in replies]
    reply = replies[0]
    assert reply.ephemeral and reply.kind == "response"
    assert words in reply.embeds[0]["description"]
    assert not reply.files


async def test_oversized_exact_request_is_refused_ephemerally_with_a_monte_carlo_hint(
    console: ConsoleSession,
) -> None:
    # N models x 10D6 attacks passes the profile parser but not the exact engine's attack-dice limit.
    models = limits.MAX_ATTACK_DICE_EXACT // 60 + 1
    [reply] = await console.send(
        f"/sim custom attacker:A=10D6 BS=3 S=4 D=1 models={models} target:T=4 Sv=3 W=2 models=20"
    )
    assert reply.kind == "response" and reply.ephemeral
    text = reply.embeds[0]["description"]
    assert "exact engine" in text and "`method: montecarlo`" in text
    assert '"method"' not in text  # the engine's JSON phrasing is not shown to Discord users


async def test_request_beyond_every_limit_gets_no_monte_carlo_hint(console: ConsoleSession) -> None:
    line = (
        "/sim custom attacker:A=10D6 BS=3 S=4 D=1 models=100; A=10D6 BS=3 S=4 D=1 models=100 "
        "target:T=4 Sv=3 W=20 models=100"
    )
    for suffix in ("", " method:montecarlo"):
        [reply] = await console.send(line + suffix)
        assert reply.kind == "response" and reply.ephemeral
        assert "montecarlo" not in reply.embeds[0]["description"]


async def test_engine_validation_error_names_the_field_and_gets_no_monte_carlo_hint(
    console: ConsoleSession,
) -> None:
    # T=500 passes the profile parser's sanity bounds; the engine's limit (T <= 100) refuses it.
    [reply] = await console.send("/sim custom attacker:A=3 BS=3 S=4 D=1 target:T=500 Sv=3 W=1")
    assert reply.kind == "response" and reply.ephemeral
    text = reply.embeds[0]["description"]
    assert text.startswith("target T:") and "500" in text
    assert "montecarlo" not in text


async def test_failure_after_deferral_deletes_the_thinking_message_and_answers_ephemerally(
    console: ConsoleSession,
) -> None:
    console.bot.services.simulation.close()  # shutting down: admitted no more, after the cheap checks
    replies = await console.send(CUSTOM)
    assert [r.kind for r in replies] == ["defer", "delete", "followup"]
    assert replies[-1].ephemeral
    assert "shutting down" in replies[-1].embeds[0]["description"]


PROFILE_TEXT = (
    st.lists(
        st.sampled_from(
            list("ABDSTWPVIabdstwv0123456789+-=;,\"' /") + ["BS=", "AP=", "kw=", "models=", "D6", "“"]
        ),
        min_size=1,
        max_size=30,
    )
    .map("".join)
    .filter(lambda t: t.strip())
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(attacker=PROFILE_TEXT, target=PROFILE_TEXT)
async def test_arbitrary_profiles_never_cause_an_unexpected_error(
    console: ConsoleSession, attacker: str, target: str
) -> None:
    replies = await console.send(f"/sim custom attacker:{attacker} target:{target}")
    assert replies
    for reply in replies:
        assert "Something went wrong" not in reply.text()
    final = replies[-1]
    assert final.ephemeral or final.files == ["sim.png"]


async def test_hazardous_losses_depend_on_the_attackers_keywords_in_11e(console: ConsoleSession) -> None:
    base = "/sim custom attacker:A=1 BS=3 S=8 AP=-3 D=2 kw=HAZARDOUS models=3{extra} target:T=4 Sv=3 W=2 models=5"
    infantry = only(await console.send(base.format(extra="")), "followup")
    vehicle = only(await console.send(base.format(extra=" unit_kw=VEHICLE")), "followup")
    hazard_infantry = field_values(infantry)["Attacker hazard losses"]
    hazard_vehicle = field_values(vehicle)["Attacker hazard losses"]
    # 11e: a hazard roll fails on 1-2; 1 mortal wound, or 3 when every attacking model is MONSTER/VEHICLE.
    assert hazard_infantry.startswith("1.00 mortal wounds on average")
    assert hazard_vehicle.startswith("3.00 mortal wounds on average")
    assert "attacker: VEHICLE" in vehicle.embeds[0]["description"]


async def test_critical_hit_threshold_option(console: ConsoleSession) -> None:
    line = '/sim custom attacker:A=6 BS=3 S=4 D=1 kw="SUSTAINED HITS 1" target:T=4 Sv=3 W=1 models=10'
    normal = field_values(only(await console.send(line), "followup"))["Average per stage"]
    fives = only(await console.send(line + " crits:5/6"), "followup")
    # 6 attacks hitting on 3+: crits on 6 give 6 x (4/6 + 1/6) = 5 hits; crits on 5+ give 6 x (4/6 + 2/6) = 6.
    assert normal.startswith("6.0 attacks → 5.0 hits")
    assert field_values(fives)["Average per stage"].startswith("6.0 attacks → 6.0 hits")
    assert "critical hits on 5+" in fives.embeds[0]["description"]
    wounds = only(await console.send(line + " crits:6/5"), "followup")
    assert "critical wounds on 5+" in wounds.embeds[0]["description"]
    (bad,) = await console.send(line + " crits:7/1")
    assert bad.ephemeral and "crits" in bad.text()


async def test_sim_unit_stays_within_discords_25_options_and_crits_offers_every_combination(console) -> None:
    unit = next(c for c in console.tree.walk_commands() if c.qualified_name == "sim unit")
    assert len(unit.parameters) == 25 and "faction" in {p.name for p in unit.parameters}
    for command in ("unit", "custom"):
        offered = await console.autocomplete(f"/sim {command} crits:", "crits")
        assert len(offered) == 25 == len({c["value"] for c in offered})
    narrowed = await console.autocomplete("/sim custom crits:5+/", "crits")
    assert narrowed and all((c["value"]).startswith("5/") for c in narrowed)


async def test_crits_accepts_the_ways_players_write_it(console: ConsoleSession) -> None:
    line = '/sim custom attacker:A=6 BS=3 S=4 D=1 kw="SUSTAINED HITS 1" target:T=4 Sv=3 W=1 models=10'
    for typed in ("5+/6+", "5 6", "5/6"):
        reply = only(await console.send(f"{line} crits:{typed}"), "followup")
        assert "critical hits on 5+" in reply.embeds[0]["description"], typed


async def test_user_typed_names_are_escaped_and_never_ping(console: ConsoleSession) -> None:
    reply = only(
        await console.send(
            "/sim custom attacker:A=3 BS=3 S=4 D=1 name='**@everyone**' target:T=4 Sv=3 W=1 name='<@222> __x__'"
        ),
        "followup",
    )
    embed = reply.embeds[0]
    text = embed["title"] + embed["description"]
    assert "@everyone" not in text.replace("@\u200beveryone", "")
    assert "\\*\\*" in embed["description"] and "\\_\\_x\\_\\_" in embed["title"]
