"""The simulator's one schema: every table, column and index once, as data; each store renders it in its own
database's words (``sqlite_ddl``, ``postgres_ddl``), and a forward migration is one more ``Migration`` here.

Types are named as the store keeps a Python value: ``INTEGER`` (SQLite's INTEGER, PostgreSQL's BIGINT), ``REAL``
(REAL, DOUBLE PRECISION), ``TEXT``.  An ``auto`` column is the row's id, given by the store on insert (SQLite's
AUTOINCREMENT, PostgreSQL's sequence ``<table>_id_seq``), starting at ``FIRST_IDS`` where the public examples'
identifiers live.  Indexes on columns that most rows leave NULL (a parent, a pending decision or deadline, a page
token) are partial: a sale decided at once writes no entry in them, and every query on them compares the column.
"""

from __future__ import annotations

from dataclasses import dataclass

INTEGER, REAL, TEXT = "INTEGER", "REAL", "TEXT"


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    null: bool = False  # NOT NULL unless True
    default: str | None = None  # an SQL literal both databases read alike: '', 0, 'none', '{}'
    key: bool = False  # the table's primary key
    auto: bool = False  # the row's id, given by the store (implies ``key``)


@dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[Column, ...]
    key: tuple[str, ...] = ()  # a primary key of several columns

    def column(self, name: str) -> Column:
        return next(column for column in self.columns if column.name == name)

    @property
    def auto(self) -> Column | None:
        return next((column for column in self.columns if column.auto), None)


@dataclass(frozen=True)
class Index:
    name: str
    table: str
    columns: tuple[str, ...]
    unique: bool = False
    where: str = ""  # a partial index: ``parent IS NOT NULL``


@dataclass(frozen=True)
class Migration:
    """What a store at an earlier version gets: a column added to a table (the latest schema has it already)."""

    version: int
    table: str
    column: Column
    why: str


def _c(name: str, type_: str, default: str | None = None, *, null: bool = False) -> Column:
    return Column(name, type_, null, default)


def _id(name: str = "id") -> Column:
    return Column(name, INTEGER, key=True, auto=True)


def _key(name: str, type_: str = TEXT) -> Column:
    return Column(name, type_, key=True)


E = "''"  # the empty text most free columns start with

TABLES: tuple[Table, ...] = (
    Table("merchants", (_key("login"), _c("payout_balance_minor", INTEGER), _c("currency", TEXT))),
    Table("transactions", (
        _id(), _c("orderid", INTEGER, "0"), _c("serial", TEXT, E), _c("login", TEXT), _c("endpoint_id", TEXT),
        _c("group_id", TEXT, null=True), _c("client_orderid", TEXT), _c("kind", TEXT),
        _c("parent", INTEGER, null=True), _c("status", TEXT), _c("stage", TEXT),
        _c("amount_minor", INTEGER, null=True), _c("currency", TEXT, null=True),
        _c("plan_status", TEXT), _c("plan_code", TEXT, E), _c("plan_message", TEXT, E),
        _c("error_code", TEXT, E), _c("error_message", TEXT, E),
        _c("three_ds", TEXT, "'none'"), _c("tds_state", TEXT, E), _c("tds_comp_ind", TEXT, E), _c("eci", TEXT, E),
        _c("tds_token", TEXT, null=True), _c("decide_at", REAL, null=True), _c("deadline_at", REAL, null=True),
        _c("card_bin", TEXT, E), _c("card_last4", TEXT, E), _c("card_type", TEXT, E),
        _c("card_exp_month", TEXT, E), _c("card_exp_year", TEXT, E), _c("cardholder", TEXT, E), _c("email", TEXT, E),
        _c("cardrefid", TEXT, E), _c("descriptor", TEXT, E), _c("redirect_url", TEXT, E),
        _c("callback_url", TEXT, E), _c("notify_url", TEXT, E), _c("form_token", TEXT, null=True),
        _c("settled", INTEGER, "0"), _c("settle_at", REAL, null=True), _c("created_at", REAL),
        _c("updated_at", REAL), _c("extra", TEXT, "'{}'"),
    )),
    Table("requests", (_key("serial"), _c("tx", INTEGER))),
    Table("card_refs", (
        _id("cardrefid"), _c("login", TEXT), _c("source_tx", INTEGER), _c("bin", TEXT), _c("last4", TEXT),
        _c("card_type", TEXT), _c("exp_month", TEXT), _c("exp_year", TEXT), _c("holder", TEXT),
        _c("created_at", REAL),
    )),
    Table("recurring", (
        _id(), _c("login", TEXT), _c("endpoint_id", TEXT), _c("cardrefid", TEXT), _c("client_orderid", TEXT),
        _c("amount_minor", INTEGER), _c("currency", TEXT), _c("period", TEXT), _c("interval", INTEGER),
        _c("repeats", INTEGER), _c("charged", INTEGER, "0"), _c("next_at", REAL, null=True),
        _c("callback_url", TEXT, E), _c("state", TEXT), _c("created_at", REAL),
    )),
    Table("nonces", (_c("login", TEXT), _c("nonce", TEXT), _c("ts", REAL)), key=("login", "nonce")),
    Table("journal", (
        _id(), _c("at", REAL), _c("login", TEXT, E), _c("operation", TEXT), _c("path", TEXT),
        _c("http_status", INTEGER), _c("response_type", TEXT), _c("serial", TEXT), _c("orderid", TEXT, E),
        _c("client_orderid", TEXT, E), _c("fields", TEXT), _c("warnings", TEXT), _c("error", TEXT, E),
    )),
    Table("callbacks", (
        _id(), _c("orderid", INTEGER), _c("login", TEXT), _c("url", TEXT), _c("params", TEXT),
        _c("attempts", INTEGER, "0"), _c("next_at", REAL), _c("state", TEXT, "'pending'"), _c("created_at", REAL),
        _c("claim", TEXT, E),
    )),
    Table("callback_attempts", (
        _id(), _c("callback_id", INTEGER), _c("at", REAL), _c("http_status", INTEGER, null=True),
        _c("error", TEXT, E), _c("elapsed", REAL, "0"),
    )),
    Table("meta", (_key("name"), _c("value", TEXT))),
    Table("leases", (_key("name"), _c("holder", TEXT), _c("until", REAL))),
    Table("faults", (
        _id(), _c("target", TEXT), _c("kind", TEXT), _c("remaining", INTEGER), _c("seconds", REAL, "0"),
        _c("created_at", REAL),
    )),
    # Hosted Fields (``rules.hosted_fields``): the ephemeral tickets, and the tokens of the cards typed into the
    # gateway's iframes: a card as a card reference keeps it (BIN, last four, type, expiry), never its number or
    # CVV; the outcome its CVV chose at tokenization
    Table("hf_tickets", (
        _key("ticket"), _c("login", TEXT), _c("endpoint_id", TEXT), _c("created_at", REAL), _c("expires_at", REAL),
        _c("spent_at", REAL, null=True), _c("spent_by", TEXT, E),
    )),
    Table("hf_tokens", (
        _key("token"), _c("login", TEXT), _c("endpoint_id", TEXT), _c("ticket", TEXT), _c("created_at", REAL),
        _c("expires_at", REAL), _c("spent_at", REAL, null=True), _c("orderid", INTEGER, null=True),
        _c("bin", TEXT), _c("last4", TEXT), _c("card_type", TEXT), _c("exp_month", TEXT), _c("exp_year", TEXT),
        _c("outcome", TEXT), _c("outcome_status", TEXT), _c("outcome_code", TEXT, E),
        _c("outcome_message", TEXT, E), _c("three_ds", TEXT, "'none'"), _c("three_ds_v1", INTEGER, "0"),
    )),
)  # fmt: skip

INDEXES: tuple[Index, ...] = (
    Index("tx_order", "transactions", ("orderid",)),
    Index("tx_client", "transactions", ("login", "client_orderid")),
    Index("tx_serial", "transactions", ("serial",)),
    Index("tx_parent", "transactions", ("parent",), where="parent IS NOT NULL"),
    Index("tx_due", "transactions", ("status", "decide_at"), where="decide_at IS NOT NULL"),
    Index("tx_deadline", "transactions", ("status", "deadline_at"), where="deadline_at IS NOT NULL"),
    Index("tx_settle", "transactions", ("settle_at",), where="settle_at IS NOT NULL"),
    Index("tx_form", "transactions", ("form_token",), unique=True, where="form_token IS NOT NULL"),
    Index("tx_tds", "transactions", ("tds_token",), unique=True, where="tds_token IS NOT NULL"),
    Index("cb_due", "callbacks", ("state", "next_at")),
    Index("hf_ticket_expiry", "hf_tickets", ("expires_at",)),  # (long-expired tickets and tokens are dropped)
    Index("hf_token_expiry", "hf_tokens", ("expires_at",)),
)

# The latest version; a store written by an earlier gatekit is brought to it by the migrations after its own.
SCHEMA_VERSION = 2
MIGRATIONS: tuple[Migration, ...] = (
    Migration(2, "callbacks", Column("claim", TEXT, default=E), "which simulator process is sending a callback"),
)

# Identifiers start where the public examples live, so they look like the gateway's.
FIRST_IDS = {"transactions": 8056020, "card_refs": 1679215, "recurring": 700100}

# What a reset empties (the merchants too, seeded again from the settings); the schema, meta and leases stay.
RESET_TABLES = ("transactions", "requests", "card_refs", "recurring", "nonces", "journal", "callbacks",
                "callback_attempts", "faults", "merchants", "hf_tickets", "hf_tokens")  # fmt: skip

TABLE_NAMES = frozenset(table.name for table in TABLES)
AUTO = {table.name: table.auto.name for table in TABLES if table.auto is not None}  # table -> its id column


# --- each database's words --------------------------------------------------------------------------------

_SQLITE_TYPES = {INTEGER: "INTEGER", REAL: "REAL", TEXT: "TEXT"}
_POSTGRES_TYPES = {INTEGER: "BIGINT", REAL: "DOUBLE PRECISION", TEXT: "TEXT"}


def sequence(table: str) -> str:
    """PostgreSQL's sequence of a table's id."""
    return f"{table}_id_seq"


def _column(column: Column, types: dict[str, str], auto: str) -> str:
    if column.auto:
        return f"{column.name} {auto}"
    parts = [column.name, types[column.type]]
    if column.key:
        parts.append("PRIMARY KEY")
    if not column.null and not column.key:
        parts.append("NOT NULL")
    if column.default is not None:
        parts.append(f"DEFAULT {column.default}")
    return " ".join(parts)


def _table(table: Table, types: dict[str, str], auto: str) -> str:
    items = [_column(column, types, auto) for column in table.columns]
    if table.key:
        items.append(f"PRIMARY KEY ({', '.join(table.key)})")
    return f"CREATE TABLE IF NOT EXISTS {table.name} ({', '.join(items)})"


def _index(index: Index) -> str:
    unique = "UNIQUE " if index.unique else ""
    where = f" WHERE {index.where}" if index.where else ""
    return f"CREATE {unique}INDEX IF NOT EXISTS {index.name} ON {index.table}({', '.join(index.columns)}){where}"


def sqlite_ddl() -> list[str]:
    """The statements that make the latest schema in SQLite (ids: ``INTEGER PRIMARY KEY AUTOINCREMENT``)."""
    return [_table(table, _SQLITE_TYPES, "INTEGER PRIMARY KEY AUTOINCREMENT") for table in TABLES] + [
        _index(index) for index in INDEXES
    ]


def postgres_ddl() -> list[str]:
    """The statements that make the latest schema in PostgreSQL (ids from a sequence per table), with the table of
    the schema's version (``gatekit_schema``)."""
    statements = ["CREATE TABLE IF NOT EXISTS gatekit_schema (version INTEGER NOT NULL)"]
    for table in TABLES:
        if table.auto is not None:
            start = f" START {FIRST_IDS[table.name]}" if table.name in FIRST_IDS else ""
            statements.append(f"CREATE SEQUENCE IF NOT EXISTS {sequence(table.name)}{start}")
        statements.append(
            _table(table, _POSTGRES_TYPES, f"BIGINT PRIMARY KEY DEFAULT nextval('{sequence(table.name)}')")
        )
        if table.auto is not None:
            statements.append(f"ALTER SEQUENCE {sequence(table.name)} OWNED BY {table.name}.{table.auto.name}")
    return statements + [_index(index) for index in INDEXES]


def sqlite_migration(migration: Migration) -> str:
    return f"ALTER TABLE {migration.table} ADD COLUMN {_column(migration.column, _SQLITE_TYPES, '')}"


def postgres_migration(migration: Migration) -> str:
    added = _column(migration.column, _POSTGRES_TYPES, "")
    return f"ALTER TABLE {migration.table} ADD COLUMN IF NOT EXISTS {added}"
