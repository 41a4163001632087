"""What a submission makes the grader show a person, cleaned: notebooks and HTML pages.

A student's notebook reaches the people who read it in two ways: its feedback page
(``feedback/<student>/<assignment>/*.html``, which the student and the instructor open)
and the autograded notebook that Formgrader shows the instructor. Both may carry what the
student wrote to run in their reader's browser: raw HTML in a markdown cell, a
``text/html``, ``text/markdown``, ``image/svg+xml`` or ``application/javascript`` output,
an image whose base64 text breaks out of its attribute. So:

``clean_notebook(nb) -> nb``
    a copy of the notebook whose markdown cells and outputs hold nothing that runs: raw
    HTML in markdown and HTML outputs go through nh3 (the Ammonia sanitizer: no script,
    event handler, iframe, object, embed, form, style, ``javascript:`` or external URL);
    an output keeps only the kinds a page shows as data (plain text, cleaned HTML or
    markdown, PNG, JPEG or GIF whose base64 decodes) and no metadata; attachments go.
``trimmed(text, limit) -> text``
    ``text`` cut to ``limit`` characters, with a visible note of how much was left out.
``clean_html(html) -> html``
    an HTML fragment or page through nh3 with the same rules; a page (a document from
    ``<!DOCTYPE`` or ``<html>``) keeps its style sheets (nbgrader's template, around
    content already cleaned) and is given back as a document.

**Bounded.** A page shows at most ``MAX_CELL`` characters of a markdown or raw cell,
``MAX_CODE`` of a code cell, ``MAX_OUTPUT`` of an output's text (each kind of it; an image
at most ``MAX_IMAGE``) and ``MAX_OUTPUTS`` outputs of a cell: beyond them the rest is left
out with a note that says how much. An honest notebook is far below every bound (a written
answer has a few thousand characters, a figure a few hundred thousand of base64); nbconvert
renders markdown at about 10 s a megabyte of maths and emphasis, so a 42 MB cell would
take the feedback minutes and gigabytes, a 50,000-character one half a second.

No regular expression touches HTML here: nh3 parses it as a browser does (html5ever).

Used by the grader (``tools.grading.judgement``: the autograded notebooks Formgrader
shows; ``tools.grading.feedback``: the feedback pages; the pages of the calibration, the
item analysis and the similarity report) and by the lab (``tools.lab.student_work``:
Formgrader's pages in the instructor's lab, on the course hub too): one sanitizer.
"""

from __future__ import annotations

import base64
import binascii
import copy

import nh3

# what a notebook's markdown and HTML outputs may hold (nh3's defaults: text, tables,
# lists, links, images; nothing that runs or submits), with class and id for styling
TAGS = set(nh3.ALLOWED_TAGS) | {"section", "main"}
ATTRIBUTES = {tag: set(names) for tag, names in nh3.ALLOWED_ATTRIBUTES.items()}
ATTRIBUTES["*"] = {"class", "id", "title", "lang"}
ATTRIBUTES["a"] = {"href", "hreflang", "name"}
URL_SCHEMES = {"http", "https", "mailto", "data"}
IMAGES = ("image/png", "image/jpeg", "image/gif")
# the page around the content (nbgrader's feedback template): its head and style sheets
PAGE_TAGS = TAGS | {"style", "title", "meta"}
PAGE_ATTRIBUTES = {**ATTRIBUTES, "meta": {"charset"}, "style": {"type"}}
KEPT_OUTPUT = ("text/plain", "text/html", "text/markdown") + IMAGES
MAX_IMAGE = 20_000_000  # characters of one image's base64 text
MAX_CELL = 50_000  # characters of a markdown or raw cell a page shows
MAX_CODE = 200_000  # characters of a code cell a page shows
MAX_OUTPUT = 100_000  # characters of one output's text (of each of its kinds)
MAX_OUTPUTS = 50  # outputs of one cell a page shows


def trimmed(text: str, limit: int) -> str:
    """``text``, or its first ``limit`` characters and a note of how many more there were."""
    if len(text) <= limit:
        return text
    return (text[:limit] + f"\n\n[... {len(text) - limit:,} more characters left out: "
            f"a page shows at most {limit:,} of it]")


def _attribute(element: str, attribute: str, value: str) -> str | None:
    """Keep a URL only where it cannot load or run anything: an image of the notebook's
    own (a data URL of an image kind), a link that is not a data URL."""
    if attribute == "src":
        return value if _data_image(value) else None
    if attribute == "href" and value.strip().lower().startswith("data:"):
        return None
    return value


def _data_image(url: str) -> bool:
    head, _, data = url.partition(",")
    kind = head[len("data:"):].partition(";")[0].lower() if head.lower().startswith("data:") else ""
    return kind in IMAGES and head.lower().endswith(";base64") and _base64(data)


def _base64(text: str) -> bool:
    if not isinstance(text, str) or len(text) > MAX_IMAGE:
        return False
    try:
        base64.b64decode("".join(text.split()), validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _clean(html: str, page: bool = False) -> str:
    return nh3.clean(
        str(html),
        tags=PAGE_TAGS if page else TAGS,
        clean_content_tags={"script"} if page else {"script", "style"},
        attributes=PAGE_ATTRIBUTES if page else ATTRIBUTES,
        attribute_filter=_attribute,
        url_schemes=URL_SCHEMES,
        strip_comments=True,
    )


def clean_html(html: str) -> str:
    """``html`` (a fragment or a whole page) without anything that runs or loads."""
    start = str(html).lstrip()[:20].lower()
    if not start.startswith(("<!doctype", "<html")):
        return _clean(html)
    body = _clean(html, page=True)
    return "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n</head>\n<body>\n" + (
        body + "\n</body>\n</html>\n"
    )


def _text(value) -> str:
    if isinstance(value, list):
        return "".join(str(part) for part in value)
    return value if isinstance(value, str) else str(value)


def _markdown(text: str) -> str:
    """Markdown with its raw HTML cleaned (text with no markup is left as written)."""
    return _clean(text) if nh3.is_html(text) else text


def clean_output(output: dict) -> dict | None:
    """One output as data a page shows, or None when nothing of it can be shown."""
    if not isinstance(output, dict):
        return None
    kind = output.get("output_type")
    if kind == "stream":
        name = output.get("name") if output.get("name") in ("stdout", "stderr") else "stdout"
        return {"output_type": "stream", "name": name,
                "text": trimmed(_text(output.get("text", "")), MAX_OUTPUT)}
    if kind == "error":
        trace = output.get("traceback")
        return {
            "output_type": "error",
            "ename": trimmed(_text(output.get("ename", "Error")), MAX_OUTPUT),
            "evalue": trimmed(_text(output.get("evalue", "")), MAX_OUTPUT),
            "traceback": [trimmed("\n".join(_text(t) for t in trace), MAX_OUTPUT)]
            if isinstance(trace, list) else [],
        }
    if kind not in ("display_data", "execute_result"):
        return None
    data = output.get("data") if isinstance(output.get("data"), dict) else {}
    kept = {}
    for mime in KEPT_OUTPUT:
        if mime not in data:
            continue
        value = _text(data[mime])
        if mime not in IMAGES:
            value = trimmed(value, MAX_OUTPUT)
        if mime == "text/html":
            value = _clean(value)
        elif mime == "text/markdown":
            value = _markdown(value)
        elif mime in IMAGES and not _base64(value):
            continue
        kept[mime] = value
    if not kept:
        return None
    clean = {"output_type": kind, "data": kept, "metadata": {}}
    if kind == "execute_result":
        count = output.get("execution_count")
        clean["execution_count"] = count if type(count) is int else None
    return clean


def clean_notebook(nb: dict) -> dict:
    """A copy of the notebook ``nb`` whose markdown and outputs hold nothing that runs."""
    nb = copy.deepcopy(nb)
    for cell in nb.get("cells", []):
        if not isinstance(cell, dict):
            continue
        cell.pop("attachments", None)
        source = _text(cell.get("source", ""))
        if cell.get("cell_type") == "markdown":
            cell["source"] = _markdown(trimmed(source, MAX_CELL))
        else:
            cell["source"] = trimmed(source, MAX_CODE if cell.get("cell_type") == "code"
                                     else MAX_CELL)
        if "outputs" in cell:
            outputs = cell["outputs"] if isinstance(cell["outputs"], list) else []
            kept = [o for o in (clean_output(x) for x in outputs[:MAX_OUTPUTS]) if o is not None]
            if len(outputs) > MAX_OUTPUTS:
                kept.append({"output_type": "stream", "name": "stdout",
                             "text": f"[... {len(outputs) - MAX_OUTPUTS:,} more outputs left "
                                     f"out: a page shows at most {MAX_OUTPUTS} of a cell]"})
            cell["outputs"] = kept
    return nb
