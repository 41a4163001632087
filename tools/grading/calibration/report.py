"""The calibration's report: two CSVs and a page an instructor reads before a term.

``calibration.csv``: a row per graded question (its honest answers and false rejects, its
slips tried and accepted, its distinct keys, each measured answer's accepted band in honest
standard deviations and the test's assertion it comes from, its status). ``slips.csv``: a
row per slip of each question. ``calibration.html``: the same, the failures first, the
table of the sessions, and for each measured answer of a Monte Carlo question the
distribution of its honest answers against the band its test accepts (matplotlib, PNG
embedded); every text escaped and the page cleaned by the course's sanitizer
(``tools.common.sanitize.clean_html``).

Stage: none (beside the grader: the calibration of the questions, before a term).
"""

from __future__ import annotations

import base64
import collections
import csv
import html
import io
from pathlib import Path

import numpy as np

from tools.common.text import csv_row
from tools.grading.calibration.run import Result
from tools.common.sanitize import clean_html

STYLE = """body{font-family:sans-serif;margin:2em;max-width:90em}td,th{padding:0.2em 0.6em;
text-align:left;vertical-align:top;border-bottom:1px solid #ddd}.fail{color:#b00020}
.known{color:#8a5a00}figure{display:inline-block;margin:0.5em}figcaption{font-size:0.85em;max-width:32em}"""


def status(result: Result) -> str:
    """"ok", "known: ..." (failures ``catalog.KNOWN`` lists, with why) or "FAIL: ..." (and the
    known ones after)."""
    failures = result.failures()
    if not failures:
        return "ok" if not result.known else "ok (a failure listed as known is not seen: mended?)"
    known = [f"{what} ({result.known[kind]})" for kind, what in failures if kind in result.known]
    parts = ([f"FAIL: {'; '.join(result.unlisted())}"] if result.unlisted() else []) + \
        ([f"known: {'; '.join(known)}"] if known else [])
    return "; ".join(parts)


def _slips(result: Result) -> str:
    return "; ".join(f"{s.label}: {s.accepted}/{s.tried}" + (f" (explained: {s.why})" if s.accepted and s.why else "")
                     for s in result.slips.values())


def _bands(result: Result) -> str:
    parts = []
    for band in result.bands.values():
        below, above = band.sigmas()
        if band.low and max(band.high) - min(band.low) < 1e-3:
            parts.append(f"{band.name}: no scaled answer passes (the test checks the draws themselves); "
                         f"from: {band.rule or 'no assertion found'}")
        elif band.low:
            parts.append(f"{band.name}: x{np.median(band.low):.4f} to x{np.median(band.high):.4f} of the "
                         f"reference, -{below:.1f} / +{above:.1f} honest sd; from: {band.rule or 'no assertion found'}")
    return " | ".join(parts)


def session_table(results: list[Result]) -> list[dict]:
    """Per session: questions, honest answers tried, false rejects, slips tried, slips
    accepted (and of those, the explained ones)."""
    rows: dict[str, collections.Counter] = {}
    for r in results:
        row = rows.setdefault(r.notebook.split("/")[0], collections.Counter())
        row["questions"] += 1
        row["honest answers"] += r.honest
        row["false rejects"] += r.false_rejects
        row["slips tried"] += sum(s.tried for s in r.slips.values())
        row["slips accepted"] += sum(s.accepted for s in r.slips.values())
        row["of them explained"] += sum(s.accepted for s in r.slips.values() if s.why)
    order = sorted(rows, key=lambda s: int(s.split("-")[1]))
    return [{"session": s, **rows[s]} for s in order]


COLUMNS = ["notebook", "question", "kind", "ids", "honest", "false_rejects", "distinct_keys",
           "largest_share", "common", "book_hits", "slips_tried", "slips_accepted", "slips",
           "tolerance", "seconds", "status"]


def write_csv(results: list[Result], folder: Path) -> tuple[Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    main, slips = folder / "calibration.csv", folder / "slips.csv"
    with open(main, "w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh)
        out.writerow(COLUMNS)
        for r in results:
            out.writerow(csv_row([
                r.notebook, r.question, r.kind, r.ids, r.honest, r.false_rejects, r.distinct_keys,
                r.largest_share, r.common, "; ".join(r.book_hits[:3]),
                sum(s.tried for s in r.slips.values()), sum(s.accepted for s in r.slips.values()),
                _slips(r), _bands(r), round(r.seconds, 2), status(r)]))
    with open(slips, "w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh)
        out.writerow(["notebook", "question", "slip", "tried", "accepted", "rate", "explained"])
        for r in results:
            for s in r.slips.values():
                out.writerow(csv_row([r.notebook, r.question, s.label, s.tried, s.accepted,
                                      round(s.rate, 4), s.why]))
    return main, slips


def _plot(result: Result) -> list[tuple[str, str]]:
    """(caption, PNG as base64) for each measured answer of the question."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    found = []
    for band in result.bands.values():
        if not band.low or not band.relative or max(band.high) - min(band.low) < 1e-3:
            continue
        low, high = float(np.median(band.low)), float(np.median(band.high))
        fig, ax = plt.subplots(figsize=(5, 2.6), dpi=80)
        ax.axvspan(min(band.low), max(band.high), color="#c8e6c9", label="accepted (some id)")
        ax.axvspan(low, high, color="#81c784", label="accepted (median id)")
        ax.hist(band.relative, bins=40, color="#1565c0", alpha=0.8, label="honest answers")
        ax.axvline(1.0, color="k", lw=0.8)
        ax.set_xlabel(f"{band.name} / the reference answer (each id's own)")
        ax.legend(fontsize=7, loc="upper left")
        fig.tight_layout()
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png")
        plt.close(fig)
        below, above = band.sigmas()
        caption = (f"{result.notebook} {result.question}: {band.name}, {len(band.relative)} honest values; "
                   f"band -{below:.1f} / +{above:.1f} sd")
        found.append((caption, base64.b64encode(buffer.getvalue()).decode("ascii")))
    return found


def page(results: list[Result], context: dict[str, str]) -> str:
    """The instructor's page: escaped text only, then cleaned."""
    e = html.escape
    failing = [r for r in results if r.failures()]
    heads = ["session", "questions", "honest answers", "false rejects", "slips tried",
             "slips accepted", "of them explained"]
    table = "".join("<tr>" + "".join(f"<td>{e(str(row[h]))}</td>" for h in heads) + "</tr>"
                    for row in session_table(results))
    fails = "".join(
        f"<li class=\"{'fail' if r.unlisted() else 'known'}\">{e(r.notebook)} {e(r.question)}: "
        f"{e(status(r))}" + (f"<br>rejected: {e(' | '.join(r.rejects[:2]))}" if r.rejects else "") + "</li>"
        for r in failing) or "<li>none</li>"
    rows = "".join(
        "<tr>" + "".join(f"<td>{e(str(v))}</td>" for v in (
            r.notebook, r.question, r.kind, f"{r.false_rejects} / {r.honest}",
            f"{r.distinct_keys} / {r.ids}" + (f" (common: {r.common})" if r.common else ""),
            _slips(r), _bands(r) or "-", status(r))) + "</tr>" for r in results)
    figures = "".join(f"<figure><img alt=\"{e(c)}\" src=\"data:image/png;base64,{b}\">"
                      f"<figcaption>{e(c)}</figcaption></figure>"
                      for r in results for c, b in _plot(r))
    about = "".join(f"<li>{e(k)}: {e(v)}</li>" for k, v in context.items())
    body = (
        "<h1>Calibration of the graded questions</h1>"
        "<p>For the instructor, before a term (never released). Each question's reference "
        "method is run for many student ids, and with other seeds where its answer is a "
        "measurement; each honest answer and each slip (a plausible wrong answer) is judged "
        "by the question's whole test, as the grader's own check judges it. A question "
        "fails when a test rejects an honest answer, accepts a slip for more than 1 % of ids "
        "without an explanation, or gives one key to more than half the ids without being "
        "listed as common.</p>"
        f"<ul>{about}</ul>"
        "<h2>Failures</h2>"
        f"<ul>{fails}</ul>"
        "<h2>Per session</h2>"
        "<table><tr>" + "".join(f"<th>{e(h)}</th>" for h in heads) + f"</tr>{table}</table>"
        "<h2>Per question</h2>"
        "<table><tr><th>notebook</th><th>question</th><th>kind</th><th>false rejects / honest</th>"
        "<th>distinct keys / ids</th><th>slips: accepted / tried</th><th>accepted band</th>"
        f"<th>status</th></tr>{rows}</table>"
        "<h2>Measured answers against their bands</h2>"
        "<p>Each honest answer divided by its id's reference answer (the solution's own seed), "
        "against the factors of the reference its test accepts: dark, the median id's band; "
        "light, from the lowest to the highest edge over the ids probed. An honest value "
        "outside the band is a false reject.</p>" + figures)
    document = (f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Calibration</title>"
                f"<style>{STYLE}</style></head><body>{body}</body></html>")
    return clean_html(document)


def write(results: list[Result], folder: Path, context: dict[str, str]) -> list[Path]:
    """The CSVs and the page under ``folder``; their paths."""
    main, slips = write_csv(results, folder)
    target = folder / "calibration.html"
    target.write_text(page(results, context), encoding="utf-8")
    return [main, slips, target]
