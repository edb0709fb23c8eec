"""Tournaments: a config's bots play every pairing its format makes (round robin, gauntlet),
every game from both seats, until the schedule is done or an SPRT decides; recorded in SQLite,
resumable, reported with standings, a crosstable and ratings.

See docs/tournament.md. The modules are layered so that everything except the runner works
without playing a game: checks -> config (formats, openings, sprt) -> schedule -> store ->
ratings/report, and the runner on top (its games played inline, in local worker processes, or
by a league's workers).
"""
