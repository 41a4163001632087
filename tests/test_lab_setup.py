"""make lab: inside the course's environment a chapter opens as a notebook, widgets are live."""

import importlib.util
import pathlib
import sys

from jupyterlab_server.settings_utils import _get_overrides

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_jupytext_is_the_default_viewer_of_markdown_in_the_environment():
    overrides, error = _get_overrides(str(ROOT / "no-app-settings"))
    assert not error
    viewers = overrides["@jupyterlab/docmanager-extension:plugin"]["defaultViewers"]
    assert viewers["markdown"] == "Jupytext Notebook"
    # set in the environment, not in the user's home
    assert (pathlib.Path(sys.prefix) / "etc/jupyter/labconfig/default_setting_overrides.json").exists()


def test_lab_extensions_for_jupytext_and_widgets_are_installed():
    extensions = pathlib.Path(sys.prefix) / "share/jupyter/labextensions"
    assert (extensions / "jupyterlab-jupytext").is_dir()
    assert (extensions / "@jupyter-widgets" / "jupyterlab-manager").is_dir()
    assert importlib.util.find_spec("ipywidgets") is not None
