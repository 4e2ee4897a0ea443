"""Storage: the SQLAlchemy store (SQLite or PostgreSQL), the duel tables' queries, the migrations."""

from patience.server.storage import analysis as analysis  # game analyses: the queue and results (migration 0020)
from patience.server.storage import apart as apart  # Play now's matches played apart
from patience.server.storage import fairplay as fairplay  # fair play: evidence, reports, marks (migration 0015)
from patience.server.storage import ladder as ladder  # what moves a rating: the ledger, the traces (migration 0016)
from patience.server.storage import roles as roles  # the accounts' roles (patience admin)
from patience.server.storage import tournaments as tournaments  # its tables belong to the schema's models
