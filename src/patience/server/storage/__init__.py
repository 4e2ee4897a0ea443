"""Storage: the SQLAlchemy store (SQLite or PostgreSQL), the duel tables' queries, the migrations."""
