"""The graph's store on its own: ranking, entity resolution, merges, forgetting, masking and
retention, on a real SQLite file, with times set by the test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from phoneuse_runtime.kernel.errors import ElementNotFound, InvalidParams
from phoneuse_runtime.kernel.events import now_ms
from phoneuse_runtime.memory.ingest import _add_foreground
from phoneuse_runtime.memory.resolve import e164, email_key, fold, phone_key
from phoneuse_runtime.memory.schema import connect
from phoneuse_runtime.memory.search import Filters, fts_query, parse_time, search
from phoneuse_runtime.memory.store import Entity, Graph, node_ref
from phoneuse_runtime.owner.privacy import mask_secrets

HOUR = 3_600_000
DAY = 24 * HOUR


@pytest.fixture
def graph(tmp_path: Path) -> Graph:
    conn = connect(tmp_path / "memory.db")
    conn.create_function("fold", 1, fold, deterministic=True)
    return Graph(conn)


def person(graph: Graph, name: str, number: str, *, source: str = "contacts") -> int:
    return graph.upsert(
        Entity("person", name, source, (phone_key(number) or "",), attrs={"phones": [number]})
    )


def message(graph: Graph, who: int, body: str, *, age_ms: int, key: str) -> int:
    ts = now_ms() - age_ms
    n = graph.upsert(Entity("message", "SMS", "sms", (key,), text=body, ts=ts))
    graph.link("messaged", who, n, ts=ts)
    return n


def names(graph: Graph, f: Filters) -> list[str]:
    ids = search(graph.conn, f).ids
    return [graph.nodes([n])[n].text or graph.nodes([n])[n].name for n in ids]


def test_the_ranking_orders_as_a_person_would(graph: Graph) -> None:
    bob = person(graph, "Bob Smith", "+1 415 555 0102")
    carol = person(graph, "Carol Diaz", "+1 415 555 0104")
    message(graph, bob, "Dinner at Luigi's on Friday?", age_ms=2 * DAY, key="sms:1")
    message(graph, bob, "dinner was great, thanks", age_ms=200 * DAY, key="sms:2")
    message(graph, carol, "Dinner plans for Saturday", age_ms=1 * DAY, key="sms:3")
    message(graph, bob, "Lunch tomorrow?", age_ms=HOUR, key="sms:4")
    dentist = graph.upsert(
        Entity("event", "Dentist appointment", "calendar", ("event:1",), ts=now_ms() - 10 * DAY)
    )
    message(graph, carol, "my dentist said to floss more", age_ms=DAY, key="sms:5")
    # "What did Bob text me about dinner?": his dinner messages only, the recent one first.
    assert names(graph, Filters(q="dinner", related_to=node_ref(bob))) == [
        "Dinner at Luigi's on Friday?",
        "dinner was great, thanks",
    ]
    # Dinner in general: equally relevant, so the newest first.
    assert names(graph, Filters(q="dinner")) == [
        "Dinner plans for Saturday",
        "Dinner at Luigi's on Friday?",
        "dinner was great, thanks",
    ]
    # "When is the dentist?": a name that says it beats a message that mentions it, though older.
    hits = search(graph.conn, Filters(q="dentist"))
    assert hits.ids[0] == dentist and hits.scores[0] > hits.scores[1]
    # Everything Bob: newest first.
    assert names(graph, Filters(related_to=node_ref(bob))) == [
        "Lunch tomorrow?",
        "Dinner at Luigi's on Friday?",
        "dinner was great, thanks",
    ]
    # Two hops: Bob's messages' other ends (none but Bob), so the same set.
    assert set(names(graph, Filters(related_to=node_ref(bob), depth=2))) == set(
        names(graph, Filters(related_to=node_ref(bob)))
    )


def test_a_strong_link_outranks_a_weak_one(graph: Graph) -> None:
    ann = person(graph, "Ann", "+1 212 555 0100")
    often = graph.upsert(Entity("app", "Food app", "app_usage", ("app:food",)))
    once = graph.upsert(Entity("app", "Map app", "app_usage", ("app:map",)))
    stamp = now_ms()
    for _ in range(8):
        graph.link("uses", ann, often, ts=stamp - DAY)
    graph.link("uses", ann, once, ts=stamp - DAY)
    assert search(graph.conn, Filters(related_to=node_ref(ann), relation="uses")).ids == [often, once]
    assert [e.name for e in graph.strongest_edges(ann)] == ["Food app", "Map app"]


def test_full_text_folds_case_and_accents_and_matches_prefixes(graph: Graph) -> None:
    graph.create(kind="note", name="Crème brûlée at Café Zoë", text="")
    for q in ("creme", "CRÈME BRU", "cafe zo", "zoë"):
        assert search(graph.conn, Filters(q=q)).total == 1, q
    assert search(graph.conn, Filters(q="brulee cafe xyz")).ids == []
    assert search(graph.conn, Filters(q='"; DROP TABLE nodes; --')).ids == []  # words, quoted
    assert fts_query("a AND b*") == '"a"* "AND"* "b"*'
    assert fts_query("?!") is None


def test_numbers_and_emails_resolve_to_one_person(graph: Graph) -> None:
    contact = graph.upsert(
        Entity(
            "person",
            "Ann Lee",
            "contacts",
            ("contact:1", phone_key("+1 (555) 000-1111") or "", email_key("Ann.Lee@Example.org") or ""),
        )
    )
    for number in ("5550001111", "+15550001111", "555-000-1111", "+1 555 000 1111"):
        assert graph.upsert(Entity("person", number, "sms", (phone_key(number) or "",))) == contact
    attendee = graph.upsert(Entity("person", "ann", "calendar", (email_key("ANN.LEE@example.ORG") or "",)))
    assert attendee == contact
    node = graph.nodes([contact])[contact]
    assert node.name == "Ann Lee"  # the contact's name wins over a number or an attendee's
    assert set(node.aliases) >= {"Ann Lee", "ann", "5550001111"}
    assert node.sources == ["calendar", "contacts", "sms"]
    assert e164("020 7946 0958", "GB") == "+442079460958"
    assert e164("020 7946 0958", "US") is None
    assert phone_key("72345") == "tel:72345"  # a short code still meets itself
    assert phone_key("no digits") is None and email_key("not an email") is None


def test_keys_that_name_two_nodes_merge_them_and_unmerge_restores_both(graph: Graph) -> None:
    by_phone = graph.upsert(Entity("person", "+15550002222", "sms", ("tel:+15550002222",)))
    by_email = graph.upsert(Entity("person", "kim", "calendar", ("email:kim@x.org",)))
    note = graph.create(kind="note", name="Kim's birthday", tags=["family"])
    graph.link("related_to", note, by_email)
    both = graph.upsert(
        Entity("person", "Kim Park", "contacts", ("contact:9", "tel:+15550002222", "email:kim@x.org"))
    )
    assert both == by_phone and not graph.exists(by_email)
    assert graph.by_key("email:kim@x.org") == both
    [merge] = graph.nodes([both])[both].attrs["merges"]
    assert graph.nodes([note])[note].related_to == [node_ref(both)]
    restored = graph.unmerge(int(merge["merge_id"].removeprefix("merge-")))
    assert restored == by_email
    assert graph.by_key("email:kim@x.org") == by_email
    assert graph.nodes([note])[note].related_to == [node_ref(by_email)]
    assert "kim" not in graph.nodes([both])[both].aliases
    with pytest.raises(ElementNotFound, match="no memory merge with id 'merge-"):
        graph.unmerge(int(merge["merge_id"].removeprefix("merge-")))


def test_remove_takes_every_row_of_the_node(graph: Graph) -> None:
    ann = person(graph, "Ann", "+1 212 555 0100")
    m = message(graph, ann, "hello", age_ms=0, key="sms:1")
    graph.remove(ann)
    conn = graph.conn
    for table, column in (("keys", "node"), ("aliases", "node"), ("sources", "node"), ("tags", "node")):
        assert conn.execute(f"SELECT count(*) FROM {table} WHERE {column} = ?", (ann,)).fetchone() == (0,)
    assert conn.execute("SELECT count(*) FROM edges").fetchone() == (0,)
    assert conn.execute("SELECT rowid FROM fts").fetchall() == [(m,)]
    assert search(graph.conn, Filters(q="ann")).ids == []


def test_retention_drops_old_messages_and_calls_only(graph: Graph) -> None:
    ann = person(graph, "Ann", "+1 212 555 0100")
    old = message(graph, ann, "old news", age_ms=400 * DAY, key="sms:1")
    new = message(graph, ann, "fresh", age_ms=DAY, key="sms:2")
    note, _ = graph.remember(kind="fact", name="old fact", text="", tags=[], related_to=[])
    graph.conn.execute("UPDATE nodes SET updated_ms = 0 WHERE id = ?", (note,))
    assert graph.expire(before_ms=now_ms() - 365 * DAY) == 1
    assert not graph.exists(old) and graph.exists(new) and graph.exists(ann) and graph.exists(note)


def test_remember_checks_its_links(graph: Graph) -> None:
    with pytest.raises(InvalidParams, match="related_to names unknown memory id"):
        graph.remember(kind="fact", name="x", text="", tags=[], related_to=["mem-99", "nonsense"])
    assert graph.conn.execute("SELECT count(*) FROM nodes").fetchone() == (0,)


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("Your verification code is 482913. It expires", "Your verification code is [code]. It expires"),
        ("G-123456 is your Google verification code.", "[code] is your Google verification code."),
        ("Use 123 456 as your login code", "Use [code] as your login code"),
        ("Your OTP: 9876", "Your OTP: [code]"),
        ("Your PIN is 4821", "Your PIN is [code]"),
        ("password: hunter2 ok", "password: [password] ok"),
        ("the wifi password is s3cr3t!", "the wifi password is [password]"),
        ("Lunch at 12:30 at 1200 Main St?", "Lunch at 12:30 at 1200 Main St?"),
        ("Call me at 415 555 0101", "Call me at 415 555 0101"),
    ],
)
def test_secrets_are_masked(text: str, masked: str) -> None:
    assert mask_secrets(text) == masked


def test_times_are_epoch_ms_or_iso() -> None:
    assert parse_time("1700000000000", "since") == 1_700_000_000_000
    assert parse_time("2023-11-14T22:13:20Z", "since") == 1_700_000_000_000
    assert parse_time("2023-11-14T23:13:20+01:00", "since") == 1_700_000_000_000
    with pytest.raises(InvalidParams, match="since: expected epoch milliseconds or an ISO-8601 time"):
        parse_time("tomorrow", "since")


@pytest.mark.parametrize(
    ("since", "until", "total"), [(1_000, 61_000, 60_000), (5_000, 5_000, 0), (9_000, 8_000, 0)]
)
def test_an_app_that_was_in_front_has_a_foreground_total(
    graph: Graph, since: int, until: int, total: int
) -> None:
    """Even two switches within one millisecond (fast phones, fast tests) record the day's total."""
    app = graph.upsert(
        Entity("app", "com.android.chrome", "app_usage", ("app:com.android.chrome",), ts=since)
    )
    _add_foreground(graph, "com.android.chrome", since, until)
    attrs = json.loads(graph.conn.execute("SELECT attrs FROM nodes WHERE id = ?", (app,)).fetchone()[0])
    assert attrs["foreground_ms_today"] == total and attrs["usage_day"]
