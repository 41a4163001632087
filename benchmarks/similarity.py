"""The similarity report's detector against a simple alternative, on simulated classes.

For each session (and seed), a class of 20 (``tests.support.simulate.disguised_copy``: honest
students in styles of their own, some answering part of the questions, and one copier
who renamed every free name and moved the added cells) is compared two ways:

* **copydetect** (``tools.grading.similarity.compare``: names and strings normalised,
  winnowed fingerprints, the released template as boilerplate, flagged by the report's rule);
* **difflib**: Python's ``SequenceMatcher.ratio`` of the two students' answer code, the
  template's lines removed, the pair with the highest ratio taken as the copy (the simple
  alternative: no tokens, no normalisation, order-sensitive).

Printed per class: the copied pair's score, the highest honest pair's, and whether the
copied pair is the one named (copydetect: flagged alone; difflib: the top pair), with the
seconds each took; then the totals.

    python benchmarks/similarity.py                  # every session, seeds 0 and 1
    python benchmarks/similarity.py --assignments session-3 --seeds 0
"""

from __future__ import annotations

import argparse
import difflib
import itertools
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools import ROOT  # noqa: E402
from tools.grading import similarity  # noqa: E402
from tests.support.simulate.disguised_copy import simulate_copying  # noqa: E402
from tools.release import assignments as course  # noqa: E402

COPIER, SOURCE = "student-13", "student-07"


def class_codes(folder: Path, assignment: str, students, template: str) -> dict[str, str]:
    return {s: "\n\n".join(similarity.answer_code(json.loads(p.read_text()), template)
                           for p in sorted((folder / s / assignment).glob("*.ipynb")))
            for s in students}


def difflib_scores(codes: dict[str, str], template: str) -> dict[tuple, float]:
    known = {line.strip() for line in template.splitlines()}
    plain = {s: "\n".join(ln for ln in c.splitlines() if ln.strip() not in known)
             for s, c in codes.items()}
    return {(a, b): difflib.SequenceMatcher(None, plain[a], plain[b]).ratio()
            for a, b in itertools.combinations(sorted(plain), 2)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--assignments", nargs="*", default=course.assignments(ROOT))
    parser.add_argument("--seeds", nargs="*", type=int, default=[0, 1])
    parser.add_argument("--students", type=int, default=20)
    args = parser.parse_args(argv)
    pair = (SOURCE, COPIER)
    print(f"{'class':<14} {'copydetect: copied':>18} {'honest max':>10} {'named':>6} {'s':>5}"
          f"   {'difflib: copied':>15} {'honest max':>10} {'named':>6} {'s':>6}")
    named = {"copydetect": 0, "difflib": 0}
    seconds = {"copydetect": 0.0, "difflib": 0.0}
    classes = 0
    for assignment in args.assignments:
        releases = [json.loads(p.read_text())
                    for p in course.notebooks(ROOT, assignment, course.RELEASE)]
        template = similarity.template_code(releases)
        for seed in args.seeds:
            with tempfile.TemporaryDirectory() as tmp:
                kinds = simulate_copying(ROOT, assignment, args.students, COPIER, SOURCE, seed,
                                         Path(tmp))
                codes = class_codes(Path(tmp), assignment, kinds, template)
            started = time.perf_counter()
            result = similarity.compare(assignment, codes, template)
            cd_s = time.perf_counter() - started
            copied = next(p for p in result.pairs if (p.first, p.second) == pair)
            honest = max(p.score for p in result.pairs if p is not copied)
            cd_ok = [(p.first, p.second) for p in result.flagged] == [pair]
            started = time.perf_counter()
            ratios = difflib_scores(codes, template)
            dl_s = time.perf_counter() - started
            dl_copied = ratios[pair]
            dl_honest = max(v for k, v in ratios.items() if k != pair)
            dl_ok = dl_copied > dl_honest
            classes += 1
            named["copydetect"] += cd_ok
            named["difflib"] += dl_ok
            seconds["copydetect"] += cd_s
            seconds["difflib"] += dl_s
            print(f"{assignment + ' #' + str(seed):<14} {copied.score:>18.3f} {honest:>10.3f} "
                  f"{'yes' if cd_ok else 'NO':>6} {cd_s:>5.1f}   {dl_copied:>15.3f} "
                  f"{dl_honest:>10.3f} {'yes' if dl_ok else 'NO':>6} {dl_s:>6.1f}")
    print(f"copydetect named the copier alone in {named['copydetect']}/{classes} classes "
          f"({seconds['copydetect']:.0f} s); difflib ranked the copy first in "
          f"{named['difflib']}/{classes} ({seconds['difflib']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
