"""Reports: stored runs aggregated into the benchmark papers' tables (``keplerlab report``, the
Leaderboard window). ``collect`` reads runs, ``layouts`` builds tables, ``formats`` renders
them, ``plots`` draws figures, ``published`` holds the papers' own numbers."""
