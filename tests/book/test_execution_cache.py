"""A change to memkit invalidates the book's execution cache."""

from tools.book import execution_cache


def test_cache_is_kept_while_memkit_is_unchanged_and_dropped_after_a_change(tmp_path, monkeypatch):
    (tmp_path / "memkit").mkdir()
    helper = tmp_path / "memkit" / "helper.py"
    helper.write_text("X = 1\n")
    monkeypatch.setattr(execution_cache, "ROOT", tmp_path)
    monkeypatch.setattr(execution_cache, "CACHE", tmp_path / "_build" / ".jupyter_cache")
    monkeypatch.setattr(execution_cache, "STAMP", tmp_path / "_build" / "stamp")
    cache = execution_cache.CACHE
    cache.mkdir(parents=True)
    execution_cache.clear_if_memkit_changed()  # first build: no stamp yet, cache dropped, stamp written
    cache.mkdir()
    (cache / "entry").write_text("outputs")
    execution_cache.clear_if_memkit_changed()  # nothing changed: cache kept
    assert (cache / "entry").exists()
    helper.write_text("X = 2\n")
    execution_cache.clear_if_memkit_changed()  # memkit changed: cache dropped
    assert not cache.exists()
