"""The rules catalog: entries from the seeds, wh40kdc and imported datasets, with fuzzy and full-text search."""
