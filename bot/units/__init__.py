"""The unit as fielded (team decision 3): model types with counts and profiles, default loadout, wargear
options and leaders, per datasheet and edition. `model` holds the dataclasses, `wh40kdc` loads them from
wh40kdc, `build` makes one from any catalog datasheet (stored wh40kdc unit, or composition/loadout text)."""

from bot.units.model import Ability, Carried, ModelType, Profile, Sized, Unit, WargearOption

__all__ = ["Ability", "Carried", "ModelType", "Profile", "Sized", "Unit", "WargearOption"]
