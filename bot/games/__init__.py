"""The shared game tracker: model, edition rules, commands, event-sourced SQLite store and CLI."""
