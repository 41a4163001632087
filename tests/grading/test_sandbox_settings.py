"""The sandbox's settings (``tools.grading.box.Sandbox``): a value of ``c.Sandbox`` in
``nbgrader_config.py`` or on nbgrader's command line reaches the bwrap command line of
the kernel nbgrader's Execute starts; the environment variable is the default under
both; a size or count that is not a whole number of at least 1 is an error that names
it; docs/grading-safely.md lists every setting."""

import re

import pytest
from nbgrader.apps.autogradeapp import AutogradeApp
from traitlets import TraitError

from support import ROOT
from tools.grading import box as boxes, cli
from tools.grading.kernels import SpareKernelManager
from tools.grading.preprocessors import SandboxExecute

VARIABLES = list(boxes.Sandbox.ENVIRONMENT.values())


@pytest.fixture(autouse=True)
def no_sandbox_variables(monkeypatch):
    """Each test starts from the defaults (the grader's own environment may set some)."""
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)


def nbgrader_config(folder, *lines):
    (folder / "nbgrader_config.py").write_text("c = get_config()\n" + "\n".join(lines) + "\n")
    return folder


def bwrap_of(config, tmp_path) -> list[str]:
    """The bwrap command line of the kernel that nbgrader's Execute (``SandboxExecute``,
    made as nbgrader makes it, from ``config``) would start, its box in ``tmp_path``."""
    execute = SandboxExecute(config=config)
    assert execute.kernel_manager_class is SpareKernelManager
    km = execute.kernel_manager_class(config=execute.config)  # as nbclient makes it
    km.sandbox.tmp = str(tmp_path)
    km._open_box(None, {})
    try:
        return km.format_kernel_cmd()
    finally:
        boxes.remove_box(km._box)


def limits_of(cmd: list[str]) -> dict:
    """The sandbox's sizes and counts as the bwrap command line gives them."""
    found = {"tmp_bytes": int(cmd[cmd.index("--size") + 1])}
    for arg in cmd:
        if m := re.fullmatch(r"--(nproc|fsize)=(\d+):\2", arg):
            found[m.group(1)] = int(m.group(2))
    return found


def test_the_defaults_reach_the_bwrap_command_line(tmp_path):
    limits = limits_of(bwrap_of(boxes.configured(tmp_path).config, tmp_path))
    assert limits["tmp_bytes"] == 512 << 20
    if boxes.privileged():
        assert limits["nproc"] == 256 and limits["fsize"] == 512 << 20


def test_a_value_of_nbgrader_config_reaches_the_bwrap_command_line(tmp_path):
    course = nbgrader_config(tmp_path, "c.Sandbox.disk_mb = 96", "c.Sandbox.nproc = 33",
                             "c.Sandbox.fsize_mb = 7")
    limits = limits_of(bwrap_of(boxes.configured(course).config, tmp_path))
    assert limits["tmp_bytes"] == 96 << 20
    if boxes.privileged():
        assert limits["nproc"] == 33 and limits["fsize"] == 7 << 20
    # as the probe of tools.grading.repair makes the kernel's settings
    made = boxes.configured(course)
    assert (made.disk_mb, made.nproc, made.fsize_mb) == (96, 33, 7)


def test_a_value_on_nbgraders_command_line_reaches_the_bwrap_command_line(tmp_path):
    app = AutogradeApp()
    app.parse_command_line(["--Sandbox.disk_mb=128", "--Sandbox.nproc=9",
                            "--Sandbox.fsize_mb=3"])
    limits = limits_of(bwrap_of(app.config, tmp_path))
    assert limits["tmp_bytes"] == 128 << 20
    if boxes.privileged():
        assert limits["nproc"] == 9 and limits["fsize"] == 3 << 20


def test_the_environment_is_the_default_and_configuration_wins(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMCOURSE_SANDBOX_DISK_MB", "64")
    monkeypatch.setenv("MEMCOURSE_SANDBOX_NPROC", "40")
    monkeypatch.setenv("MEMCOURSE_SANDBOX_TMP", str(tmp_path))
    assert (boxes.Sandbox().disk_mb, boxes.Sandbox().nproc) == (64, 40)
    assert boxes.Sandbox().tmp == str(tmp_path)
    course = nbgrader_config(tmp_path, "c.Sandbox.disk_mb = 80")
    made = boxes.configured(course)
    assert (made.disk_mb, made.nproc) == (80, 40)
    assert limits_of(bwrap_of(made.config, tmp_path))["tmp_bytes"] == 80 << 20


def test_the_mode_given_by_make_grade_wins_over_the_course_file(tmp_path, monkeypatch):
    course = nbgrader_config(tmp_path, "c.Sandbox.mode = 'off'")
    assert boxes.configured(course).mode == "off"
    assert boxes.configured(course, "bwrap").mode == "bwrap"
    monkeypatch.setenv("MEMCOURSE_SANDBOX", "off")
    assert SandboxExecute().kernel_manager_class is not SpareKernelManager


@pytest.mark.parametrize("line, words", [
    ("c.Sandbox.disk_mb = -5", ["disk_mb", "less than 1", "-5"]),
    ("c.Sandbox.nproc = 0", ["nproc", "less than 1"]),
    ("c.Sandbox.fsize_mb = 'lots'", ["fsize_mb", "expected an int", "lots"]),
    ("c.Sandbox.disk_mb = 1.5", ["disk_mb", "expected an int"]),
    ("c.Sandbox.mode = 'none'", ["mode", "bwrap", "off"]),
])
def test_a_bad_value_in_nbgrader_config_is_an_error_naming_it(tmp_path, line, words):
    with pytest.raises(TraitError) as error:
        boxes.configured(nbgrader_config(tmp_path, line))
    assert all(word in str(error.value) for word in words), str(error.value)


@pytest.mark.parametrize("arg, words", [
    ("--Sandbox.disk_mb=-1", ["disk_mb", "less than 1"]),
    ("--Sandbox.nproc=many", ["nproc", "expected an int", "many"]),
])
def test_a_bad_value_on_the_command_line_is_an_error_when_execute_is_made(arg, words):
    app = AutogradeApp()
    app.parse_command_line([arg])
    with pytest.raises(TraitError) as error:
        SandboxExecute(config=app.config)
    assert all(word in str(error.value) for word in words), str(error.value)


@pytest.mark.parametrize("value", ["12.5", "512MB", "-3"])
def test_a_bad_environment_value_is_an_error_naming_the_variable(monkeypatch, value):
    monkeypatch.setenv("MEMCOURSE_SANDBOX_FSIZE_MB", value)
    with pytest.raises(TraitError) as error:
        boxes.Sandbox()
    assert "MEMCOURSE_SANDBOX_FSIZE_MB" in str(error.value) or "fsize_mb" in str(error.value)


def test_make_grade_stops_on_a_bad_setting_before_grading(tmp_path, monkeypatch, capsys):
    if boxes.unusable():
        pytest.fail(boxes.unusable())
    monkeypatch.setenv("MEMCOURSE_SANDBOX_DISK_MB", "half")
    with pytest.raises(SystemExit) as stop:
        cli.main(["--course-dir", str(ROOT), "--submitted", str(tmp_path), "--sandbox", "bwrap"])
    assert stop.value.code == 2
    assert "MEMCOURSE_SANDBOX_DISK_MB='half': not a whole number" in capsys.readouterr().err


def test_the_guide_lists_every_setting_with_its_variable():
    text = (ROOT / "docs" / "grading-safely.md").read_text()
    rows = {line.split("|")[1].strip(): line for line in text.splitlines()
            if line.startswith("| `Sandbox.")}
    assert set(rows) == {f"`Sandbox.{name}`" for name in boxes.Sandbox.ENVIRONMENT}
    for name, variable in boxes.Sandbox.ENVIRONMENT.items():
        assert f"`{variable}`" in rows[f"`Sandbox.{name}`"], name
        assert boxes.Sandbox.class_traits()[name].help, name
