"""Detachments are entries under their own names (seeds, wh40kdc, game-datacards, Wahapedia); a detachment's
answer shows its rule and lists its stratagems and enhancements with buttons that survive a restart."""

from __future__ import annotations

from bot.catalog.importers import gdc_json
from bot.catalog.model import is_detachment_entry
from bot.catalog.service import Catalog
from bot.console.session import ConsoleSession
from tests.catalog.conftest import REPO, full_catalog, full_dir  # noqa: F401 - session fixtures

FIXTURE = REPO / "tests" / "fixtures" / "gdc-11e"


def only(replies: list) -> object:
    assert len(replies) == 1, [r.to_json() for r in replies]
    return replies[0]


async def test_war_horde_answers_with_its_rule_stratagems_and_enhancements(console: ConsoleSession) -> None:
    reply = only(await console.send("/rule query:war horde"))
    embed = reply.embeds[0]
    assert embed["title"] == "War Horde" and embed["description"].startswith("**Detachment** · Orks")
    assert "**Get Stuck In** (detachment rule)" in embed["description"]
    assert "melee attacks have [Sustained Hits 1]" in embed["description"]
    fields = {f["name"]: f["value"] for f in embed["fields"]}
    assert "Hit 'em Harder" in fields["Stratagems (6)"] and "Close-range Dakka" in fields["Stratagems (6)"]
    assert "Follow Me Ladz" in fields["Enhancements (5)"]
    labels = {c["label"]: c for c in reply.components}
    assert {"Hit 'em Harder", "Follow Me Ladz"} <= set(labels)
    await console.restart()  # the buttons carry the entry in their custom_id
    shown = only(await console.click(labels["Hit 'em Harder"]["custom_id"], user=222))
    assert shown.ephemeral and shown.embeds[0]["title"] == "Hit 'em Harder"
    assert "[Lethal Hits]" in shown.embeds[0]["description"]  # the seed page's full text, not metadata


async def test_the_rule_and_other_spellings_find_the_detachment(console: ConsoleSession) -> None:
    rule = only(await console.send("/rule query:get stuck in")).embeds[0]
    assert rule["title"] == "Get Stuck In" and rule["description"].startswith("**War Horde** detachment rule")
    oath = only(await console.send("/rule query:oathband")).embeds[0]
    assert oath["title"] == "Oathband" and "**Ruthless Efficiency** (detachment rule)" in oath["description"]
    need = only(await console.send("/rule query:needgaard oathband")).embeds[0]
    assert need["title"] == "Needgaârd Oathband" and "Martial Leverage" in need["description"]
    choices = await console.autocomplete("/rule query:war hord", "query")
    assert choices[0]["name"].startswith("War Horde · 11e · Detachment · Orks")


def test_wh40kdc_detachments_and_enhancements_are_all_imported(console: ConsoleSession) -> None:
    catalog: Catalog = console.bot.services.catalog
    wh = [r for r in catalog.index.records if r.dataset == "wh40kdc"]
    assert sum(1 for r in wh if r.kind == "detachment") == 484
    assert sum(1 for r in wh if r.kind == "enhancement") == 999
    assert all(is_detachment_entry(r.id) for r in wh if r.kind == "detachment")
    enhancement = catalog.get(next(r.id for r in wh if r.kind == "enhancement" and r.name == "Follow Me Ladz"))
    assert enhancement.data["cost"] == 20 and enhancement.data["detachment"] == "War Horde"
    assert enhancement.data["metadata_only"] and "Move characteristic" in enhancement.text


def test_seed_detachments_without_a_printed_rule_say_so(console: ConsoleSession) -> None:
    catalog: Catalog = console.bot.services.catalog
    dread = catalog.get("11e:detachment:seed.orks.detachments:dread-mob")
    assert dread is not None and dread.data["incomplete"] == "text"
    assert dread.data["stratagems"] == ["Dread Power", "Stomping Juggernaut"]
    # one thing with the wh40kdc copy, which names its rule
    assert catalog.search("dread mob", kind="detachment")[0].name == "Dread Mob"
    assert catalog.get("11e:detachment:wh40kdc.orks.detachments:dread-mob").data["rules"]


def test_game_datacards_detachments_carry_their_ids() -> None:
    batches = gdc_json.load_path(FIXTURE)
    dets = {e.name: e for e in batches["gdc:orks"][2] if is_detachment_entry(e.id)}
    assert set(dets) == {"War Horde", "Blitz Brigade"}
    assert dets["Blitz Brigade"].data["gdc_id"] == "28be3515-baa7-41c1-9a46-81b27c97d722"
    assert dets["Blitz Brigade"].data["rules"][0]["name"] == "Eager for the Fight"
    assert "Armoured Duellists" in dets["Blitz Brigade"].data["stratagems"]


def test_wahapedia_detachments_are_entries(full_catalog: Catalog) -> None:  # noqa: F811
    hit = full_catalog.search("shield host", kind="detachment", edition="10e")[0]
    entry = full_catalog.get(hit.id)
    assert is_detachment_entry(entry.id) and entry.name == "Shield Host"
    assert entry.data["rules"] and entry.data["rules"][0]["name"] == "Martial Mastery"
    strats, _enh = full_catalog.detachment_parts(entry)
    assert strats


