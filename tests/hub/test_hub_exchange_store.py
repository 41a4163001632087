"""The exchange service's store (tools/hub/hub_exchange.py) without a hub: the names and
paths it takes, each student's share, the sizes, the server's time, who sees what."""

from __future__ import annotations

import base64
import datetime

import pytest

from tools.hub.hub_exchange import MB, Limits, Refused, Store, safe_path


def files(**named: bytes) -> dict:
    return {"files": {name.replace("__", "/"): base64.b64encode(data).decode()
                      for name, data in named.items()}}


@pytest.fixture
def store(tmp_path):
    made = Store(tmp_path / "store", Limits(share_bytes=1000, share_files=5,
                                            submission_bytes=600, release_bytes=10 * MB,
                                            max_files=4))
    made.release("session-3", files(**{"exit-test.ipynb": b"{}", "data__x.csv": b"1"}))
    return made


@pytest.mark.parametrize("name", ["../x", "/etc/passwd", "a/../../b", ".hidden", "a\\b",
                                  "", "a//b", "/".join("d" * 9), "x\x00y", ". "])
def test_a_path_with_tricks_is_refused(name):
    with pytest.raises(Refused):
        safe_path(name)


def test_ordinary_paths_are_taken():
    assert safe_path("exit-test.ipynb") == ("exit-test.ipynb",)
    assert safe_path("data/table (1).csv") == ("data", "table (1).csv")


@pytest.mark.parametrize("who", ["../mct-student2", "a/b", "", ".x", "x" * 65])
def test_a_name_with_tricks_is_refused(store, who):
    with pytest.raises(Refused):
        store.submit(who, "session-3", files(a=b"1"))
    with pytest.raises(Refused):
        store.submit("ann", who, files(a=b"1"))


def test_the_store_is_private_and_a_release_is_read_back(store):
    assert oct(store.root.stat().st_mode & 0o777) == "0o700"
    assert store.released() == [{"assignment_id": "session-3", "notebooks": ["exit-test"]}]
    got = store.release_files("session-3")
    assert {k: base64.b64decode(v) for k, v in got.items()} == {"exit-test.ipynb": b"{}",
                                                               "data/x.csv": b"1"}
    with pytest.raises(Refused) as again:
        store.release("session-3", files(a=b"1"))
    assert again.value.status == 409
    store.release("session-3", files(b=b"2"), force=True)
    assert list(store.release_files("session-3")) == ["b"]


def test_a_submission_gets_the_servers_time_whatever_it_carries(store):
    before = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    payload = files(**{"exit-test.ipynb": b"answer"})
    payload["timestamp"] = "2099-01-01 00:00:00.000000 UTC"  # ignored
    entry = store.submit("ann", "session-3", payload)
    when = datetime.datetime.strptime(entry["timestamp"], "%Y-%m-%d %H:%M:%S.%f UTC")
    assert before <= when <= datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    assert store.submission_files("ann", "session-3", entry["id"])["timestamp"] == entry["timestamp"]


def test_each_student_sees_their_own_submissions_only(store):
    store.submit("ann", "session-3", files(a=b"1"))
    store.submit("bea", "session-3", files(b=b"2"))
    assert {s["student_id"] for s in store.submissions("ann")} == {"ann"}
    assert {s["student_id"] for s in store.submissions()} == {"ann", "bea"}


def test_a_share_full_stops_its_student_only(store):
    for _ in range(2):
        store.submit("ann", "session-3", files(a=b"x" * 400))
    with pytest.raises(Refused) as full:
        store.submit("ann", "session-3", files(a=b"x" * 400))
    assert full.value.status == 507 and "your share of the exchange is full" in str(full.value)
    store.submit("bea", "session-3", files(a=b"x" * 400))  # a classmate still hands in


def test_too_many_files_in_a_share_is_refused(store):
    store.submit("ann", "session-3", files(a=b"1", b=b"1", c=b"1"))
    with pytest.raises(Refused, match="share of the exchange is full"):
        store.submit("ann", "session-3", files(a=b"1", b=b"1", c=b"1"))


def test_sizes_and_counts_are_bounded(store):
    with pytest.raises(Refused, match="size limit") as big:
        store.submit("ann", "session-3", files(a=b"x" * 601))
    assert big.value.status == 413
    with pytest.raises(Refused, match="at most 4"):
        store.submit("ann", "session-3", files(a=b"", b=b"", c=b"", d=b"", e=b""))
    with pytest.raises(Refused, match="inside a file"):
        store.submit("ann", "session-3", files(a=b"1", a__b=b"2"))
    with pytest.raises(Refused, match="not base64"):
        store.submit("ann", "session-3", {"files": {"a": "***"}})
    with pytest.raises(Refused, match="not released"):
        store.submit("ann", "session-9", files(a=b"1"))
    assert store.used("ann") == (0, 0)


def test_feedback_goes_to_its_student_and_time(store):
    entry = store.submit("ann", "session-3", files(**{"exit-test.ipynb": b"1"}))
    stamp = store.release_feedback("ann", "session-3",
                                   {"timestamp": entry["timestamp"] + "\n",
                                    **files(**{"exit-test.html": b"<p>ok</p>"})})
    assert stamp == entry["timestamp"]
    assert [f["timestamp"] for f in store.feedback("ann", "session-3")] == [stamp]
    assert store.feedback("bea", "session-3") == []
    assert store.submissions("ann")[0]["feedback"] is True
    with pytest.raises(Refused, match="submission's time"):
        store.release_feedback("ann", "session-3", {"timestamp": "../../x", **files(a=b"1")})
