"""Army lists: read the exports players paste (GW app, NewRecruit, ListForge, BattleScribe) into army units.

`decode` turns bytes into a payload wh40kdc's importers accept (bounded: size, zip, XML); `limits` says what a
list may cost (lines, depth, nodes, numbers, units, models) and checks it while the list is read; `parse` runs
the importers and maps every unit onto a catalog datasheet with its composition and diagnostics; `reader`
reads lists for the bot in a capped worker process, a few per user and server at a time; `model` is the army
as stored in a game's event log; `faction_rules` says which tracked rule belongs to which faction.
"""
