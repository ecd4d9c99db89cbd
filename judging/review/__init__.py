"""Human review in Argilla: a local argilla-server (SQLite, in-memory search engine) and its CLI."""
