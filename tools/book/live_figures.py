"""Sphinx extension: every figure of the HTML book is live on its page, with no kernel.

At build time each figure shown in its default state (a cell ending in
``figures.get("id")``) has every state of its controls rendered once by
``memkit.figures.frames`` (the figure's own code path: same pixels, same reading as the
live widget), in each layout: wide (``_figures/<id>/``, WebP files) and narrow, drawn for a
phone's column (``_figures/<id>/narrow/``: panels stacked, type of 11 CSS px or more). The
page
carries the figure's alt text, prompt, controls and readings as a small JSON block, and
``_figures/player.js`` (served by the book itself) draws the prompt and the controls above
the picture and swaps picture and reading as a control moves, from the narrow frames while the window is no wider than
``NARROW_MEDIA`` (checked again as it turns or is resized). The cell's source,
``figures.get("id")``, is left out of the page (it runs in the notebook, not here), and the
picture loads only when the reader comes near it. A reader without JavaScript sees the
default picture, with the reading drawn under it (on a narrow screen the narrow frame of the
default state, through ``<picture>``), and hears the figure's alt text followed by that
reading.

Rendering runs in worker processes while the book executes its chapters, and is cached
in ``_build/.figure_frames/<hash of memkit and matplotlib>/``: a rebuild after a prose
edit renders nothing. The LaTeX build is untouched (the PDF keeps the default picture).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from docutils import nodes

PLAYER = Path(__file__).with_name("live_figures.js")
SITE_FOLDER = "_figures"
#: the windows that show the narrow frames (the CSS of the controls narrows there too)
NARROW_MEDIA = "(max-width: 40rem)"
DEFAULT_CALL = re.compile(r'(?:^|\n)figures\.get\(\s*"([a-z0-9-]+)"\s*\)\s*$')


def cache_root(build_dir: Path) -> Path:
    """The frame cache of this memkit and this matplotlib (any change renders anew)."""
    import matplotlib
    import PIL
    from tools.book.execution_cache import memkit_hash  # the course root is on the path (local_extensions: ./)

    versions = f"{memkit_hash()} {matplotlib.__version__} {PIL.__version__}"
    return build_dir / ".figure_frames" / hashlib.sha256(versions.encode()).hexdigest()[:16]


def frame_name(key: str) -> str:
    return key.replace(",", "-") + ".webp"


def render_to(figure_id: str, folder: str) -> str:
    """Render every frame of one figure, in both layouts, into ``folder`` (run in a worker
    process)."""
    import matplotlib

    matplotlib.use("Agg")
    from memkit.figures import frames

    target = Path(folder) / figure_id
    spec, rendered = frames.render(figure_id)
    narrow_spec, narrow = frames.render(figure_id, "narrow")
    partial = target.with_name(figure_id + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    (partial / "narrow").mkdir(parents=True)
    for key, (data, reading) in rendered.items():
        (partial / frame_name(key)).write_bytes(data)
        narrow_data, narrow_reading = narrow[key]
        if narrow_reading != reading:
            raise RuntimeError(f"{figure_id} {key}: the narrow reading {narrow_reading!r}"
                               f" is not the wide one's {reading!r}")
        (partial / "narrow" / frame_name(key)).write_bytes(narrow_data)
    spec["frames"] = {key: reading for key, (_, reading) in rendered.items()}
    spec["narrow"] = {"media": NARROW_MEDIA, "width": narrow_spec["width"],
                      "height": narrow_spec["height"]}
    (partial / "spec.json").write_text(json.dumps(spec, ensure_ascii=False))
    shutil.rmtree(target, ignore_errors=True)
    partial.rename(target)  # a figure's folder is complete or absent
    return figure_id


def figure_ids_in_book(app) -> list[str]:
    """The figures shown in their default state by the documents of the book."""
    found = []
    for docname in sorted(app.project.docnames):
        path = Path(app.srcdir) / f"{docname}.md"
        if path.exists():
            for figure_id in re.findall(r'figures\.get\(\s*"([a-z0-9-]+)"\s*\)', path.read_text()):
                if figure_id not in found:
                    found.append(figure_id)
    return found


def start_rendering(app) -> None:
    """Render the missing figures in the background while the chapters execute."""
    app.env_live_figures = None
    if app.builder.format != "html":
        return
    cache = cache_root(Path(app.outdir).parent)
    cache.mkdir(parents=True, exist_ok=True)
    missing = [i for i in figure_ids_in_book(app) if not (cache / i / "spec.json").exists()]
    pool = ProcessPoolExecutor(max_workers=max(1, min(2, os.cpu_count() or 1))) if missing else None
    futures = {i: pool.submit(render_to, i, str(cache)) for i in missing} if pool else {}
    app.env_live_figures = {"cache": cache, "pool": pool, "futures": futures, "used": set()}


def spec_of(app, figure_id: str) -> dict:
    state = app.env_live_figures
    future = state["futures"].get(figure_id)
    if future is not None:
        future.result()  # raises the worker's error, with its traceback
    elif not (state["cache"] / figure_id / "spec.json").exists():
        render_to(figure_id, str(state["cache"]))
    state["used"].add(figure_id)
    return json.loads((state["cache"] / figure_id / "spec.json").read_text())


def no_script_alt(spec: dict) -> str:
    """The default picture's alt text: what it shows, then the reading drawn under it (the
    player, once running, keeps the first and writes the reading as text)."""
    default = ",".join(str(c["default"]) for c in spec["controls"])
    return f"{spec['alt']} Shown: {spec['frames'][default]}"


def make_live(app, doctree, docname) -> None:
    """After each default-state figure cell, the data the player needs (HTML only)."""
    if getattr(app, "env_live_figures", None) is None:
        return
    base = "../" * docname.count("/") + SITE_FOLDER + "/"
    first = True
    for cell in list(doctree.findall(nodes.container)):
        if "cell" not in cell.get("classes", []):
            continue
        source = next(iter(cell.findall(nodes.literal_block)), None)
        match = DEFAULT_CALL.search(source.astext()) if source is not None else None
        images = list(cell.findall(nodes.image))
        if match is None or not images:
            continue
        spec = spec_of(app, match.group(1))
        image = images[-1]
        image["alt"] = no_script_alt(spec)
        image["loading"] = "lazy"
        # without JavaScript, a narrow window shows the default state's narrow frame
        default = ",".join(str(c["default"]) for c in spec["controls"])
        narrow = spec["narrow"]
        holder = image.parent
        holder.insert(holder.index(image), nodes.raw("", (
            f'<picture><source media="{narrow["media"]}"'
            f' srcset="{base}{spec["id"]}/narrow/{frame_name(default)}"'
            f' width="{narrow["width"]}" height="{narrow["height"]}">'), format="html"))
        holder.insert(holder.index(image) + 1, nodes.raw("", "</picture>", format="html"))
        for source_block in [n for n in cell.children if "cell_input" in n.get("classes", [])]:
            cell.remove(source_block)  # figures.get("id") cannot run on this page
        payload = json.dumps({**spec, "base": base}, ensure_ascii=False).replace("</", "<\\/")
        html = (
            f'<div class="memfig-live" data-figure="{spec["id"]}">'
            f'<script type="application/json">{payload}</script></div>'
        )
        if first:
            html += f'<script src="{base}player.js" defer></script>'
            first = False
        cell.parent.insert(cell.parent.index(cell) + 1, nodes.raw("", html, format="html"))


def copy_frames(app, exception) -> None:
    """Put the frames of the figures the book shows, and the player, into the site."""
    state = getattr(app, "env_live_figures", None)
    if state is None:
        return
    if state["pool"] is not None:
        state["pool"].shutdown(wait=True)
    if exception is not None:
        return
    site = Path(app.outdir) / SITE_FOLDER
    site.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(PLAYER, site / "player.js")
    wanted = figure_ids_in_book(app)
    for figure_id in wanted:
        if not (state["cache"] / figure_id / "spec.json").exists():
            render_to(figure_id, str(state["cache"]))
        target = site / figure_id  # copied anew: a few MB, and never stale
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(state["cache"] / figure_id, target)
    for old in site.iterdir():  # a figure the book no longer shows
        if old.is_dir() and old.name not in wanted:
            shutil.rmtree(old)


def setup(app):
    app.connect("builder-inited", start_rendering)
    app.connect("doctree-resolved", make_live)
    app.connect("build-finished", copy_frames)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
