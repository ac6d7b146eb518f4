"""The optional live-board web server: read-only overlay pages of one channel's game, for OBS.

Off by default; `COGITATOR_WEB_PORT` turns it on inside the bot process (run and console alike).
`tokens` keeps the unguessable links (hashes only), `feed` turns committed game changes into a stream
by polling the state database (so every shard and process sees every change), `view` shapes what a
page shows, and `server` is the aiohttp application with its security headers and connection limits.
"""
