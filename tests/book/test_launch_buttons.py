"""The HTML book's launch buttons: a chapter opens on the course hub through
nbgitpuller when _config.yml names a hub, and no page has a hub's button when it names none
(the Binder button of every chapter is tested in tests/book/test_take_away.py).

The link itself, followed by a student on a real hub, is tested in tests/test_hub.py.
"""

import pathlib
import re
import shutil
import subprocess
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
JB = pathlib.Path(sys.executable).with_name("jupyter-book")


def test_no_hub_named_no_hub_launch_button_on_any_page(built_book):
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert config["launch_buttons"]["jupyterhub_url"] == ""  # the course names no hub
    pages = sorted(built_book.rglob("*.html"))
    assert len(pages) > 20
    for page in pages:
        text = page.read_text()
        assert "git-pull" not in text and "Launch on JupyterHub" not in text, page


def test_a_hub_named_gives_the_theme_a_launch_link_to_it(tmp_path):
    """With a hub's address and the repository its users pull from, Jupyter Book gives the
    theme what it builds each chapter's nbgitpuller link from (JupyterLab, the branch)."""
    text = (ROOT / "_config.yml").read_text()
    text = text.replace('  jupyterhub_url: ""', '  jupyterhub_url: "https://hub.example.edu"')
    text, found = re.subn(r'(?m)^(repository:\n  url: )"[^"]*"',
                          r'\1"file:///srv/memcourse/public/memcourse"', text)
    assert found == 1
    (tmp_path / "_config.yml").write_text(text)
    shutil.copy(ROOT / "_toc.yml", tmp_path / "_toc.yml")
    result = subprocess.run([str(JB), "config", "sphinx", str(tmp_path)], capture_output=True,
                            text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    conf = (tmp_path / "conf.py").read_text()
    namespace: dict = {}
    exec(compile(conf, "conf.py", "exec"), namespace)  # noqa: S102 - Jupyter Book's own output
    theme = namespace["html_theme_options"]
    assert theme["launch_buttons"]["jupyterhub_url"] == "https://hub.example.edu"
    assert theme["launch_buttons"]["notebook_interface"] == "jupyterlab"
    assert theme["repository_url"] == "file:///srv/memcourse/public/memcourse"
    assert theme["repository_branch"] == "main" and theme["repository_provider"]
    assert not (theme["use_edit_page_button"] or theme["use_issues_button"])
