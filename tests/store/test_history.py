"""File history: version naming, deleted vs emptied, session trees and scoping, threads."""

import threading

import pytest

from app.store import FileChange, InvalidRecordError, RecordNotFoundError, Store
from app.store.models import RecordedChange


def _change(store: Store, session_id: str, path: str, before: str, after: str, deleted: bool = False) -> None:
    """What the tools do: the initial once per session and path, then the new version."""
    if store.history.get_by_path_and_session(path, session_id) is None:
        store.history.create(session_id, path, before)
    store.history.create_version(session_id, path, after, deleted=deleted)


def test_initial_then_numbered_versions(store: Store) -> None:
    session = store.sessions.create().id
    initial = store.history.create(session, "src/app.py", "one\n")
    v1 = store.history.create_version(session, "src/app.py", "two\n")
    v2 = store.history.create_version(session, "src/app.py", "three\n")
    assert [(v.version, v.seq, v.content) for v in (initial, v1, v2)] == [
        ("initial", 0, "one\n"),
        ("v1", 1, "two\n"),
        ("v2", 2, "three\n"),
    ]
    assert store.history.versions(session, "src/app.py") == [initial, v1, v2]
    assert store.history.get_by_path_and_session("src/app.py", session) == v2
    assert store.history.get_by_path_and_session("src/other.py", session) is None


def test_a_second_initial_is_refused(store: Store) -> None:
    session = store.sessions.create().id
    store.history.create(session, "a.txt", "x")
    with pytest.raises(InvalidRecordError, match="already has an initial version.*create_version"):
        store.history.create(session, "a.txt", "y")
    assert [v.content for v in store.history.versions(session, "a.txt")] == ["x"]


def test_a_version_without_an_initial_is_refused(store: Store) -> None:
    session = store.sessions.create().id
    with pytest.raises(InvalidRecordError, match=r"no initial version.*call create\(\)"):
        store.history.create_version(session, "a.txt", "new")
    assert store.history.versions(session, "a.txt") == []


def test_history_needs_an_existing_session(store: Store) -> None:
    with pytest.raises(RecordNotFoundError, match="session 'ghost' does not exist"):
        store.history.create("ghost", "a.txt", "")


@pytest.mark.parametrize("path", ["", "/etc/hosts", "./a.txt", "src/../a.txt", "src//a.txt", "src/"])
def test_paths_must_be_workspace_relative_posix(store: Store, path: str) -> None:
    session = store.sessions.create().id
    with pytest.raises(InvalidRecordError, match="not a workspace-relative POSIX path"):
        store.history.create(session, path, "x")
    assert store.db.query_one("SELECT COUNT(*) FROM files")[0] == 0


def test_a_deleted_version_must_be_empty(store: Store) -> None:
    session = store.sessions.create().id
    store.history.create(session, "a.txt", "x\n")
    with pytest.raises(InvalidRecordError, match="must have empty content"):
        store.history.create_version(session, "a.txt", "x\n", deleted=True)


def test_deleted_file_and_emptied_file_differ(store: Store) -> None:
    session = store.sessions.create().id
    _change(store, session, "deleted.txt", "a\nb\n", "", deleted=True)
    _change(store, session, "emptied.txt", "a\nb\n", "")
    deleted, emptied = store.history.list_latest_session_files(session)
    assert (deleted.path, deleted.deleted, deleted.latest_content) == ("deleted.txt", True, "")
    assert (emptied.path, emptied.deleted, emptied.latest_content) == ("emptied.txt", False, "")
    assert (deleted.additions, deleted.deletions) == (emptied.additions, emptied.deletions) == (0, 2)
    assert store.history.get_by_path_and_session("deleted.txt", session).deleted is True


def test_list_compares_initial_with_latest_sorted_by_path(store: Store) -> None:
    session = store.sessions.create().id
    _change(store, session, "z.py", "a\nb\nc\n", "a\nB\nc\n")
    store.history.create_version(session, "z.py", "a\nB\nc\nd\n")
    _change(store, session, "a/new.py", "", "print(1)\n")
    store.history.create(session, "untouched.py", "only an initial\n")
    assert store.history.list_latest_session_files(session) == [
        FileChange("a/new.py", session, "", "print(1)\n", "v1", False, 1, 0),
        FileChange("z.py", session, "a\nb\nc\n", "a\nB\nc\nd\n", "v2", False, 2, 1),
    ]


def test_a_reverted_file_stays_listed_with_no_changes(store: Store) -> None:
    session = store.sessions.create().id
    _change(store, session, "a.txt", "same\n", "changed\n")
    store.history.create_version(session, "a.txt", "same\n")
    [change] = store.history.list_latest_session_files(session)
    assert (change.path, change.version, change.additions, change.deletions) == ("a.txt", "v2", 0, 0)
    assert change.unchanged and not change.created


def test_a_created_file_has_an_absent_initial_and_once_deleted_is_unchanged(store: Store) -> None:
    session = store.sessions.create().id
    store.history.record_changes(session, [
        RecordedChange("new.txt", "", "", created=True), RecordedChange("empty.txt", "", "x\n"),
    ])  # fmt: skip
    assert [v.deleted for v in store.history.versions(session, "new.txt")] == [True, False]
    assert [v.deleted for v in store.history.versions(session, "empty.txt")] == [False, False]
    listed = {c.path: (c.created, c.unchanged) for c in store.history.list_latest_session_files(session)}
    assert listed == {"empty.txt": (False, False), "new.txt": (True, False)}
    store.history.create_version(session, "new.txt", "", deleted=True)
    store.history.create_version(session, "empty.txt", "", deleted=True)
    listed = {c.path: (c.created, c.unchanged) for c in store.history.list_latest_session_files(session)}
    assert listed == {"empty.txt": (False, False), "new.txt": (True, True)}


def test_content_written_elsewhere_since_the_last_version_is_recorded_before_the_change(store: Store) -> None:
    """What a change replaced is never lost: when the file held something else than the
    session's latest version (an editor wrote it), that content becomes a version first."""
    session = store.sessions.create().id
    store.history.record_changes(session, [RecordedChange("a.txt", "one\n", "two\n")])
    store.history.record_changes(session, [RecordedChange("a.txt", "two\n", "three\n")])  # as left: no extra
    store.history.record_changes(session, [RecordedChange("a.txt", "by hand\n", "four\n")])
    store.history.record_changes(session, [RecordedChange("a.txt", "", "five\n", created=True)])  # removed by hand
    versions = [(v.version, v.content, v.deleted) for v in store.history.versions(session, "a.txt")]
    assert versions == [
        ("initial", "one\n", False), ("v1", "two\n", False), ("v2", "three\n", False),
        ("v3", "by hand\n", False), ("v4", "four\n", False), ("v5", "", True), ("v6", "five\n", False),
    ]  # fmt: skip


def test_a_binary_file_restored_to_other_bytes_of_its_size_is_not_unchanged(store: Store) -> None:
    session = store.sessions.create().id
    placeholder = "(binary file, 2 bytes)"
    store.history.create(session, "b.bin", placeholder, data=b"\x00\x01")
    store.history.create_version(session, "b.bin", placeholder, data=b"\x00\x02")
    [change] = store.history.list_latest_session_files(session)
    assert not change.unchanged
    store.history.create_version(session, "b.bin", placeholder, data=b"\x00\x01")
    [change] = store.history.list_latest_session_files(session)
    assert change.unchanged


def test_child_session_files_are_included_in_the_parent_list(store: Store) -> None:
    parent = store.sessions.create("parent").id
    child = store.sessions.create("child", parent_id=parent).id
    grandchild = store.sessions.create("grandchild", parent_id=child).id
    _change(store, parent, "shared.txt", "original\n", "parent edit\n")
    _change(store, child, "child-only.txt", "c\n", "c2\n")
    _change(store, grandchild, "shared.txt", "parent edit\n", "", deleted=True)

    changes = {c.path: c for c in store.history.list_latest_session_files(parent)}
    assert sorted(changes) == ["child-only.txt", "shared.txt"]
    shared = changes["shared.txt"]
    assert shared.session_id == grandchild  # the latest version came from the sub-agent
    assert (shared.initial_content, shared.latest_content, shared.deleted) == ("original\n", "", True)
    assert (shared.additions, shared.deletions) == (0, 1)
    assert changes["child-only.txt"].session_id == child

    child_view = {c.path: c for c in store.history.list_latest_session_files(child)}
    assert sorted(child_view) == ["child-only.txt", "shared.txt"]
    assert child_view["shared.txt"].initial_content == "parent edit\n"  # the parent is not the child's tree


def test_sessions_editing_the_same_path_stay_apart(store: Store) -> None:
    earlier = store.sessions.create("earlier").id
    later = store.sessions.create("later").id
    unrelated = store.sessions.create("unrelated").id
    _change(store, earlier, "a.txt", "1\n", "2\n")
    _change(store, later, "a.txt", "2\n", "3\n")
    store.history.create_version(later, "a.txt", "4\n")

    assert [v.version for v in store.history.versions(earlier, "a.txt")] == ["initial", "v1"]
    assert [v.version for v in store.history.versions(later, "a.txt")] == ["initial", "v1", "v2"]
    assert store.history.get_by_path_and_session("a.txt", earlier).content == "2\n"
    [earlier_change] = store.history.list_latest_session_files(earlier)
    assert (earlier_change.initial_content, earlier_change.latest_content) == ("1\n", "2\n")
    [later_change] = store.history.list_latest_session_files(later)
    assert (later_change.initial_content, later_change.latest_content) == ("2\n", "4\n")
    assert store.history.list_latest_session_files(unrelated) == []


def test_concurrent_versions_of_one_path_get_distinct_sequence_numbers(store: Store) -> None:
    session = store.sessions.create().id
    store.history.create(session, "hot.txt", "0")
    errors: list[BaseException] = []

    def writer(tag: str) -> None:
        try:
            for n in range(100):
                store.history.create_version(session, "hot.txt", f"{tag}{n}")
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=writer, args=(tag,)) for tag in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    versions = store.history.versions(session, "hot.txt")
    assert [v.seq for v in versions] == list(range(201))
    assert [v.version for v in versions[:3]] == ["initial", "v1", "v2"]
    for tag in "ab":  # each thread's versions are in its own order
        mine = [v.content for v in versions if v.content.startswith(tag)]
        assert mine == [f"{tag}{n}" for n in range(100)]
