"""Importers turn one source format into catalog entries; they never touch the database themselves."""
