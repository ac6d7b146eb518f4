"""`/game overlay` and `/league overlay`: who may make or revoke a live-board link, and the words of the answer."""

from __future__ import annotations

from typing import Any

from bot.errors import UserError
from bot.games.store import NO_GAME
from bot.web.tokens import LINKS_PER_GAME_MAX, OverlayTokens

WEB_OFF = ("The live board is off on this bot. The operator turns it on by setting `COGITATOR_WEB_PORT` "
           "(see docs/operations.md).")


def _game(store: Any, channel_id: int, user_id: int, manager: bool) -> dict[str, Any]:
    export = store.export(channel_id)
    if export is None:
        raise UserError(NO_GAME)
    if not manager and user_id not in {p["user_id"] for p in export["players"]}:
        raise UserError("Only the game's players, or members with Manage Channel, can manage its live board.")
    return export


def issue_link(store: Any, tokens: OverlayTokens, link_for: Any, *, channel_id: int, user_id: int,
               manager: bool) -> str:
    """A new unguessable link to the channel's game (the active one, else the last finished one)."""
    export = _game(store, channel_id, user_id, manager)
    token = tokens.issue(export["game_id"], channel_id, user_id)
    url = link_for(token)
    views = " · ".join(f"`{v}`" for v in ("scoreboard", "banner", "round", "clocks", "log"))
    return (f"Live board of game #{export['game_id']} (read-only, updates as the game changes):\n{url}\n\n"
            f"Add it to OBS as a browser source sized 1920×1080; the background is transparent. One view per "
            f"source: append {views} to the link. Anyone with the link can watch, so share it only with your "
            f"stream. `/game overlay revoke:true` stops every link of this channel's games (the newest "
            f"{LINKS_PER_GAME_MAX} links of a game work at once).")


def revoke_links(store: Any, tokens: OverlayTokens, *, channel_id: int, user_id: int, manager: bool) -> str:
    """Stops every link of this channel's games: the current game's, and earlier games' that `/game overlay`
    can no longer name once a new game has started."""
    _game(store, channel_id, user_id, manager)
    count = tokens.revoke(channel_id)
    if not count:
        return "This channel's games have no live-board link to revoke."
    return (f"Revoked {count} live-board link{'s' if count != 1 else ''} of this channel's games: open pages "
            f"go blank within a second and the links show nothing.")


def league_link(leagues: Any, tokens: OverlayTokens, link_for: Any, *, guild_id: int, channel_id: int | None,
                user_id: int, name: str | None, revoke: bool) -> str:
    """`/league overlay`: a new unguessable link to a league's table, or revoke all of them."""
    league = leagues.find(guild_id, name, channel_id)
    if revoke:
        count = tokens.revoke_league(league.id, guild_id)
        if not count:
            return f"{league.name} has no live table link to revoke."
        return (f"Revoked {count} live table link{'s' if count != 1 else ''} of {league.name}: open pages go blank "
                "within a few seconds and the links show nothing.")
    url = link_for(tokens.issue_league(league.id, guild_id, user_id), "l")
    return (f"Live table of {league.name} (read-only, the top 25, updates within a few seconds of a change):\n{url}\n\n"
            "Add it to OBS as a browser source sized 1920×1080; the background is transparent. Anyone with the link "
            f"can watch, so share it only with your stream. `/league overlay revoke:true` stops every link of this "
            f"league (its newest {LINKS_PER_GAME_MAX} links work at once).")
