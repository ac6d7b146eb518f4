"""Server leagues: results of tracked games that both players confirmed, standings, Elo ratings, statistics.

- `standings`: the pure fold of confirmed results into standings (Elo, W-D-L, VP) and the ranking order;
- `stats`: faction win rates with Wilson intervals, VP by category, missions, a player's rating history;
- `schema`, `store`: the league event log and its projections on either state backend;
- `export`: contract 10 (JSON and CSV).
"""
