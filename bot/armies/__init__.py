"""Army lists: read the exports players paste (GW app, NewRecruit, ListForge, BattleScribe) into army units.

`decode` turns bytes into a payload wh40kdc's importers accept (bounded: size, zip, XML); `parse` runs the
importers and maps every unit onto a catalog datasheet with its composition and diagnostics; `model` is the
army as stored in a game's event log; `faction_rules` says which tracked rule belongs to which faction.
"""
