"""A change to memkit invalidates the book's execution cache."""

import pathlib

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


def test_pages_sharing_a_hash_key_are_executed_once(tmp_path):
    """Pages without code share jupyter-cache's key: the parallel run takes one of them, so
    no two workers create the same cache folder; a page with code keeps its own entry."""
    from jupyter_cache import get_cache

    pages = {"start": "# Start\n\nNo code.\n", "session": "# Session\n\nNo code either.\n",
             "chapter": "# Chapter\n\n```{code-cell} ipython3\n1 + 1\n```\n"}
    header = "---\njupytext:\n  text_representation:\n    format_name: myst\n" \
             "kernelspec:\n  name: python3\n  display_name: Python 3\n---\n"
    cache = get_cache(str(tmp_path / "cache"))
    records = []
    for name, text in pages.items():
        (tmp_path / f"{name}.md").write_text(header + text)
        records.append(cache.add_nb_to_project(str(tmp_path / f"{name}.md"),
                                               read_data=execution_cache.MYST_READER))
    kept = execution_cache.one_per_hash(cache, records)
    assert [pathlib.Path(r.uri).stem for r in kept] == ["start", "chapter"]
