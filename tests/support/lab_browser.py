"""Drive the course's JupyterLab in a real browser, as a student does.

Used by tests/lab/test_lab_browser.py (the end-to-end test) and benchmarks/lab_figures.py
(key press to new picture, per figure). The server is the one `make lab` starts
(tools/lab/launch.py: same configuration, same role), on a free port of 127.0.0.1, with a
random token, a throw-away Jupyter home, and ``window.jupyterapp`` exposed so that the
page can be asked what JupyterLab holds. The browser is the one ``tools.common.chromium``
launches. What is asked of the page is JavaScript for ``page.evaluate``, each snippet an
async function made by :func:`in_page`, which gives it the helpers every snippet uses
(``PAGE_HELPERS``: ``sleep``, ``widgetOf(id)``, ``outputOf(cell, selector)``).
"""

from __future__ import annotations

import re
import secrets
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

from tools import ROOT
from tools.common.ports import free_port
from tools.lab import launch

class LabServer:
    """The course's JupyterLab on 127.0.0.1, started as a child process and stopped by PID."""

    def __init__(self, role: str = "student", ready_timeout: float = 180):
        self.home = Path(tempfile.mkdtemp(prefix="memcourse-lab-"))
        self.port = free_port()
        self.token = secrets.token_hex(16)
        env = launch.environment(role)
        env.update(
            JUPYTER_CONFIG_DIR=str(self.home / "config"),   # no ~/.jupyter settings or workspaces
            JUPYTER_DATA_DIR=str(self.home / "data"),
            JUPYTER_RUNTIME_DIR=str(self.home / "runtime"),
            MEMCOURSE_EXCHANGE=str(self.home / "no-exchange"),
            IPYTHONDIR=str(self.home / "ipython"),
        )
        env = launch.environment(role, base=env)  # page config decided with that exchange
        argv = launch.command(self.port, open_browser=False, extra=[
            "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={self.token}",
            "--LabApp.expose_app_in_browser=True",
        ])
        self.log = open(self.home / "server.log", "w")  # noqa: SIM115 (closed by stop)
        self.process = subprocess.Popen(argv, env=env, cwd=ROOT, stdout=self.log,
                                        stderr=subprocess.STDOUT)
        self._wait_ready(ready_timeout)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"JupyterLab stopped at start:\n{self.log_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{self.url}/api/status?token={self.token}",
                                            timeout=5) as response:
                    if response.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"JupyterLab not ready after {timeout} s")

    def log_text(self) -> str:
        self.log.flush()
        return (self.home / "server.log").read_text(errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()  # JupyterLab shuts its kernels down on SIGTERM
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.log.close()
        shutil.rmtree(self.home, ignore_errors=True)


# -- in the page (JavaScript run through Playwright's page.evaluate) ------------------
# what every snippet may use: ``sleep(ms)``, ``widgetOf(id)`` (the main area's widget of
# that id), ``outputOf(cell, selector)`` (the first match of ``selector`` in a cell's outputs)
PAGE_HELPERS = """
  const sleep = ms => new Promise(r => setTimeout(r, ms));
  const widgetOf = id => Array.from(window.jupyterapp.shell.widgets('main')).find(w => w.id === id);
  const outputOf = (cell, selector) => cell.node.querySelector('.jp-OutputArea ' + selector);
"""


def in_page(params: str, body: str) -> str:
    """An async function for ``page.evaluate`` of ``params`` (its one argument, as written
    in JavaScript: ``id``, ``[id, index]``) whose body is ``body``, given ``PAGE_HELPERS``."""
    return f"async ({params}) => {{{PAGE_HELPERS}{body}}}"


APP_READY = in_page("", """
  for (let i = 0; i < 600 && !(window.jupyterapp && window.jupyterapp.started); i++) await sleep(100);
  await window.jupyterapp.started;
  await window.jupyterapp.restored;
  return true;
""")

# open a file with a given viewer, run every cell, wait for the end; report what happened
OPEN_AND_RUN = in_page("[path, factory, run]", """
  const app = window.jupyterapp;
  const widget = await app.commands.execute('docmanager:open', {path, factory});
  await widget.context.ready;
  await widget.sessionContext.ready;
  app.shell.activateById(widget.id);
  await sleep(200);
  const started = performance.now();
  if (run) {
    for (let i = 0; i < 600 && !(widget.sessionContext.session && widget.sessionContext.session.kernel); i++)
      await sleep(100);
    await app.commands.execute('notebook:run-all-cells');
    const cells = () => widget.content.widgets.filter(c => c.model.type === 'code');
    for (let i = 0; i < 1800; i++) {
      const busy = widget.sessionContext.session?.kernel?.status !== 'idle';
      const pending = cells().some(c => c.model.executionCount === null
                                        || c.promptNode?.textContent.includes('*'));
      if (!busy && !pending) break;
      await sleep(100);
    }
  }
  return {id: widget.id, factory: app.docRegistry.getWidgetFactory(factory) ? factory : null,
          seconds: (performance.now() - started) / 1000,
          kernel: widget.sessionContext.session?.kernel?.name || null,
          cells: widget.content.widgets.length};
""")

ERRORS = in_page("id", """
  const found = [];
  widgetOf(id).content.widgets.forEach((cell, index) => {
    if (cell.model.type !== 'code') return;
    if (cell.model.executionCount === null) found.push(`cell ${index}: not run`);
    for (const out of cell.model.outputs.toJSON()) {
      if (out.output_type === 'error') found.push(`cell ${index}: ${out.ename}: ${out.evalue}`);
      if (out.output_type === 'stream' && out.name === 'stderr' && /Error|Traceback/.test(out.text))
        found.push(`cell ${index}: stderr ${String(out.text).slice(0, 300)}`);
    }
  });
  return found;
""")

# every markdown cell scrolled into view until drawn; the text the reader sees, per cell
RENDERED_MARKDOWN = in_page("id", """
  const out = [];
  for (const [index, cell] of widgetOf(id).content.widgets.entries()) {
    if (cell.model.type !== 'markdown') continue;
    cell.node.scrollIntoView();
    let drawn = null;
    for (let i = 0; i < 100 && !drawn; i++) {
      drawn = cell.node.querySelector('.jp-MarkdownOutput, .jp-RenderedMarkdown, .myst');
      if (!drawn || !drawn.innerText.trim()) { drawn = null; await sleep(50); }
    }
    await sleep(30);
    const links = drawn ? Array.from(drawn.querySelectorAll('a')).map(a => [a.textContent, a.getAttribute('href') || '']) : [];
    out.push({index, text: drawn ? drawn.innerText : null, links,
              badges: drawn ? drawn.querySelectorAll('span[class^="bdg-"]').length : 0,
              boxes: drawn ? drawn.querySelectorAll('aside, .admonition, [class*="admonition"]').length : 0});
  }
  return out;
""")

# every figure cell scrolled into view and waited on (up to 30 s each on a loaded machine)
# until its widget's picture is decoded: a kernel gone idle has sent the widget, but the
# page draws it later, and only once the cell is near the viewport
FIGURES = in_page("id", """
  const out = [];
  for (const [index, cell] of widgetOf(id).content.widgets.entries()) {
    if (cell.model.type !== 'code' || !/figures\\.get\\(/.test(cell.model.sharedModel.getSource())) continue;
    cell.node.scrollIntoView({block: 'center'});
    const picture = () => outputOf(cell, '.widget-image');
    for (let i = 0; i < 300 && !(picture() && picture().complete && picture().naturalWidth); i++)
      await sleep(100);
    const img = picture();
    const source = cell.model.sharedModel.getSource().trim().split('\\n');
    out.push({index, last: source[source.length - 1], image: !!img,
              sliders: cell.node.querySelectorAll('.jp-OutputArea .noUi-handle').length,
              toggles: cell.node.querySelectorAll('.jp-OutputArea .widget-toggle-buttons').length,
              width: img ? img.getBoundingClientRect().width : 0,
              natural: img ? img.naturalWidth : 0});
  }
  return out;
""")

# [kind, position] of each control of the figure in cell ``index``
CONTROLS = in_page("[id, index]", """
  const node = widgetOf(id).content.widgets[index].node;
  const found = [];
  node.querySelectorAll('.jp-OutputArea .noUi-handle').forEach((_, i) => found.push(['slider', i]));
  node.querySelectorAll('.jp-OutputArea .widget-toggle-buttons').forEach((_, i) => found.push(['toggle', i]));
  return found;
""")

# arm a watch on one figure's picture: the time from the next key press to the new picture
ARM = in_page("[id, index]", """
  const cell = widgetOf(id).content.widgets[index];
  cell.node.scrollIntoView({block: 'center'});
  const img = outputOf(cell, '.widget-image');
  const reading = outputOf(cell, '.widget-html');
  const watch = {src: img.src, reading: reading ? reading.innerText : '', pressed: null, shown: null};
  window.__figureWatch = watch;
  const onKey = () => { if (watch.pressed === null) watch.pressed = performance.now(); };
  document.addEventListener('keydown', onKey, {capture: true, once: true});
  const observer = new MutationObserver(() => {
    if (img.src !== watch.src && watch.shown === null) {
      img.decode().catch(() => null).then(() => { watch.shown = performance.now(); });
      observer.disconnect();
    }
  });
  observer.observe(img, {attributes: true, attributeFilter: ['src']});
  return true;
""")

WATCHED = in_page("[id, index]", """
  const cell = widgetOf(id).content.widgets[index];
  const watch = window.__figureWatch;
  for (let i = 0; i < 600 && watch.shown === null; i++) await sleep(25);  // up to 15 s
  const img = outputOf(cell, '.widget-image');
  const reading = outputOf(cell, '.widget-html');
  const text = () => (reading ? reading.innerText : '');
  for (let i = 0; i < 120 && text() === watch.reading; i++) await sleep(25);  // sent just after
  return {changed: img.src !== watch.src, reading_changed: text() !== watch.reading,
          ms: watch.shown !== null && watch.pressed !== null ? watch.shown - watch.pressed : null};
""")

SAVE_AND_CLOSE = in_page("id", """
  const app = window.jupyterapp;
  const widget = widgetOf(id);
  app.shell.activateById(id);
  await app.commands.execute('docmanager:save');
  await widget.sessionContext.shutdown();
  const dirty = widget.context.model.dirty;
  widget.dispose();
  return dirty;
""")


# a command in a terminal of the lab (JupyterLab's terminal service, as File > New >
# Terminal opens one): the shell's output, and the command's exit status, read from a
# line the shell computes (the echoed command line cannot hold it)
TERMINAL = in_page("[command, seconds]", """
  const session = await window.jupyterapp.serviceManager.terminals.startNew();
  let out = '';
  session.messageReceived.connect((_, msg) => { if (msg.type === 'stdout') out += msg.content[0]; });
  for (let i = 0; i < 100 && !out; i++) await sleep(100);  // the shell's first prompt
  session.send({type: 'stdin', content: [command + '; echo "__end_$((6*7))_$?__"\\r']});
  const done = /__end_42_(\\d+)__/;
  const started = Date.now();
  while (!done.test(out) && Date.now() - started < seconds * 1000) await sleep(200);
  const match = out.match(done);
  await session.shutdown();
  return {output: out, status: match ? Number(match[1]) : null};
""")

# open a file with a viewer; wait for it to be drawn
OPEN = in_page("[path, factory]", """
  const app = window.jupyterapp;
  const widget = await app.commands.execute('docmanager:open', {path, factory});
  await widget.context.ready;
  app.shell.activateById(widget.id);
  await sleep(2000);
  return widget.id;
""")

# the HTML viewer's "Trust HTML" on the widget ``id``: its frame may run scripts
TRUST_HTML = in_page("id", """
  const app = window.jupyterapp;
  app.shell.activateById(id);
  await app.commands.execute('htmlviewer:trust-html');
  await sleep(2000);
  return widgetOf(id).content.sandbox;
""")


def run_in_terminal(page, command: str, seconds: float = 600) -> tuple[int | None, str]:
    """(exit status, output without terminal escapes) of ``command`` in a lab terminal."""
    done = page.evaluate(TERMINAL, [command, seconds])
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r", "", done["output"])
    return done["status"], text


def open_lab(browser, server: LabServer, viewport=(1400, 1000)):
    context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
    page = context.new_page()
    page.goto(f"{server.url}/lab/tree/book?token={server.token}", wait_until="load")
    page.evaluate(APP_READY)
    return page


def figure_controls(page, widget_id: str, index: int) -> list[tuple[str, int]]:
    """(kind, position) of each control of the figure in cell ``index``."""
    return page.evaluate(CONTROLS, [widget_id, index])


def press_control(page, widget_id: str, index: int, kind: str, position: int) -> dict:
    """Change one control with the keyboard; how long the new picture took, and what changed."""
    output = page.locator(f"#{widget_id} .jp-Cell").nth(index).locator(".jp-OutputArea")
    if kind == "slider":
        handle = output.locator(".noUi-handle").nth(position)
        handle.scroll_into_view_if_needed()
        handle.focus()
        now, top = (float(handle.get_attribute("aria-valuenow") or 0),
                    float(handle.get_attribute("aria-valuemax") or 0))
        key = "ArrowLeft" if now >= top else "ArrowRight"
        page.evaluate(ARM, [widget_id, index])
        page.keyboard.press(key)
    else:
        group = output.locator(".widget-toggle-buttons").nth(position)
        target = group.locator("button:not(.mod-active)").first
        target.scroll_into_view_if_needed()
        target.focus()
        page.evaluate(ARM, [widget_id, index])
        page.keyboard.press("Space")  # (Enter is JupyterLab's "edit this cell")
    return page.evaluate(WATCHED, [widget_id, index])


def git_status(root: Path = ROOT) -> str:
    return subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True,
                          text=True, check=True).stdout

