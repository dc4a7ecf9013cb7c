"""The README's examples as they stand: the GRANTs a worker login needs on its own tables (run as
written, then a task as that login), passing per-call data to a task, and FailureClass."""

import os
import re
import secrets

import psycopg
from psycopg.conninfo import make_conninfo

import idem_client as idem
from idem_client import FailureClass

README = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")


def readme_block(language, containing):
    with open(README, encoding="utf-8") as f:
        text = f.read()
    blocks = [b for b in re.findall(r"```%s\n(.*?)```" % language, text, re.S) if containing in b]
    assert len(blocks) == 1, "README.md has %d %s blocks with %r" % (len(blocks), language, containing)
    return blocks[0]


def test_grants_and_per_call_data_as_the_readme_shows(dsn, conn):
    role = "shop_worker_" + secrets.token_hex(4)
    password = secrets.token_hex(16)
    conn.execute("DROP SCHEMA IF EXISTS shop CASCADE")
    conn.execute("CREATE SCHEMA shop")
    conn.execute("CREATE TABLE shop.payments (id bigserial PRIMARY KEY, order_id text NOT NULL,"
                 " amount_cents bigint NOT NULL)")
    try:
        conn.execute(readme_block("sql", "GRANT idem_worker TO shop_worker").replace("shop_worker", role))
        conn.execute(psycopg.sql.SQL("ALTER ROLE {} PASSWORD {}").format(psycopg.sql.Identifier(role),
                                                                          psycopg.sql.Literal(password)))
        with idem.connect(make_conninfo(dsn, user=role, password=password)) as worker:
            store = idem.TaskStore(worker)
            namespace = {"idem": idem, "store": store}
            exec(readme_block("python", "functools.partial"), namespace)  # noqa: S102 - the README's own code
            assert namespace["outcome"].kind == idem.Outcome.SUCCEEDED
            assert namespace["outcome"].result == {"receipt": "r-shop:charge:order-125", "amount_cents": 4500}
            # The login has nothing on Idem's own tables: the protocol's functions are its only way in.
            try:
                worker.execute("SELECT count(*) FROM idem.task_idempotency")
                raise AssertionError("the worker login read task_idempotency")
            except psycopg.errors.InsufficientPrivilege:
                pass
        assert conn.execute("SELECT order_id, amount_cents FROM shop.payments ORDER BY id").fetchall() == \
            [("order-124", 990), ("order-125", 4500)]
        assert conn.execute("SELECT idempotency_key, status FROM idem.task_idempotency WHERE idempotency_key LIKE"
                            " 'shop:charge:order-12_' ORDER BY 1").fetchall() == \
            [("shop:charge:order-124", "succeeded"), ("shop:charge:order-125", "succeeded")]
    finally:
        conn.execute("DROP SCHEMA shop CASCADE")
        conn.execute(psycopg.sql.SQL("DROP OWNED BY {}").format(psycopg.sql.Identifier(role)))
        conn.execute(psycopg.sql.SQL("DROP ROLE IF EXISTS {}").format(psycopg.sql.Identifier(role)))


def test_readme_lists_every_failure_class():
    with open(README, encoding="utf-8") as f:
        text = f.read()
    row = next(line for line in text.splitlines() if line.startswith("| `FailureClass` |"))
    for member in FailureClass:
        assert "`FailureClass.%s` (`\"%s\"`" % (member.name, member.value) in row, member
    assert "three members" in row and len(FailureClass) == 3
