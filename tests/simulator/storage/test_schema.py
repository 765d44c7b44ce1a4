"""One schema feeds both databases (issue 35): a new SQLite store and a new PostgreSQL store hold exactly the
tables, columns (type, NOT NULL, default, key) and indexes that ``storage.schema`` describes."""

from __future__ import annotations

from typing import Any

import pytest

from tests.postgres import Cluster, postgres  # noqa: F401  (the session's cluster)
from toolkit.simulator.storage import schema
from toolkit.simulator.storage.postgres import PostgresStore
from toolkit.simulator.storage.sqlite import SqliteStore

SQLITE_TYPES = {schema.INTEGER: "INTEGER", schema.REAL: "REAL", schema.TEXT: "TEXT"}
POSTGRES_TYPES = {schema.INTEGER: "bigint", schema.REAL: "double precision", schema.TEXT: "text"}


def described(types: dict[str, str]) -> dict[str, dict[str, tuple[Any, ...]]]:
    """table -> column -> (type, not null, default, in the primary key), as the schema says."""
    found = {}
    for table in schema.TABLES:
        found[table.name] = {
            column.name: (types[column.type], not column.null or column.key, column.default,
                          column.key or column.name in table.key)
            for column in table.columns
        }  # fmt: skip
    return found


def test_a_new_sqlite_store_holds_the_schema() -> None:
    store = SqliteStore()
    try:
        held: dict[str, dict[str, tuple[Any, ...]]] = {}
        for table in schema.TABLES:
            rows = store.all(f"PRAGMA table_info({table.name})")
            held[table.name] = {row["name"]: (row["type"], bool(row["notnull"]) or bool(row["pk"]), row["dflt_value"],
                                              bool(row["pk"])) for row in rows}  # fmt: skip
        indexes = {row["name"] for row in store.all("SELECT name FROM sqlite_master WHERE type='index'")}
    finally:
        store.close()
    assert held == described(SQLITE_TYPES)
    assert {index.name for index in schema.INDEXES} <= indexes


def test_a_new_postgres_store_holds_the_same_schema(postgres: Cluster) -> None:  # noqa: F811
    store = PostgresStore(postgres.new_database())
    try:
        held: dict[str, dict[str, tuple[Any, ...]]] = {}
        keys = {(row["table_name"], row["column_name"]) for row in store.all(
            "SELECT k.table_name, k.column_name FROM information_schema.table_constraints c "
            "JOIN information_schema.key_column_usage k ON c.constraint_name = k.constraint_name "
            "WHERE c.constraint_type = 'PRIMARY KEY' AND c.table_schema = 'public'")}  # fmt: skip
        for table in schema.TABLES:
            rows = store.all(
                "SELECT column_name, data_type, is_nullable, column_default FROM information_schema.columns "
                "WHERE table_schema = 'public' AND table_name = ?",
                (table.name,),
            )
            held[table.name] = {}
            for row in rows:
                default = row["column_default"]
                auto = default is not None and default.startswith("nextval(")
                if default is not None:
                    default = None if auto else default.split("::")[0]
                held[table.name][row["column_name"]] = (row["data_type"], row["is_nullable"] == "NO", default,
                                                        (table.name, row["column_name"]) in keys)  # fmt: skip
        indexes = {row["indexname"] for row in store.all("SELECT indexname FROM pg_indexes WHERE schemaname='public'")}
        first = store.one("SELECT nextval('transactions_id_seq') AS id")
    finally:
        store.close()
    assert held == described(POSTGRES_TYPES)
    assert {index.name for index in schema.INDEXES} <= indexes
    assert first is not None and first["id"] == schema.FIRST_IDS["transactions"]


@pytest.mark.parametrize("table", schema.TABLES, ids=[table.name for table in schema.TABLES])
def test_each_table_is_rendered_once_for_each_database(table: schema.Table) -> None:
    made = f"TABLE IF NOT EXISTS {table.name} ("
    in_sqlite = [statement for statement in schema.sqlite_ddl() if made in statement]
    in_postgres = [statement for statement in schema.postgres_ddl() if made in statement]
    assert len(in_sqlite) == len(in_postgres) == 1
