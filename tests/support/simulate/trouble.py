"""The troubled submissions of a simulated class: broken files and answers that misbehave.

``ZOO`` names each kind of trouble; ``troubled`` writes a full submission carrying one of
them, with the autograded score it should still get.
"""

from __future__ import annotations

import copy
import json

from tools.grading.cells import cell_text
from .answers import (
    autograded_points, code_questions, earned_points, index_of, questions, student_notebook,
)

# The kinds of trouble a submission can bring, and the notebook they hit.
ZOO = {
    "invalid-json": "the notebook file is cut in the middle: not valid JSON",
    "loop-ignoring-sigint": "an answer loops forever and ignores the interrupt (SIGINT)",
    "kernel-exit": "an answer kills its kernel with os._exit",
    "endless-print": "an answer prints without end",
    "deleted-test": "the first test cell was deleted",
    "deleted-setup": "the set-up cell was deleted",
    "duplicated-test": "the first test cell was copied (a duplicated grade id)",
    "retyped-test": "the first test cell was turned into a markdown cell",
    "edited-test": "the first test cell was replaced by `pass`, its question left blank",
}


def troubled(kind: str, source: dict, release: dict) -> tuple[str, float]:
    """A full submission with one trouble of ``kind``: (file text, expected autograded score)."""
    every = {q.answer_id for q in questions(source)}
    full = student_notebook(source, release, every)
    total = autograded_points(source)
    first, second = (code_questions(source) + code_questions(source))[:2]
    nb = copy.deepcopy(full)
    expected = total
    if kind == "invalid-json":
        text = json.dumps(full, indent=1)
        return text[: len(text) // 2] + "\n<<< the file ends here", 0.0
    if kind == "loop-ignoring-sigint":
        nb["cells"][index_of(nb, first.answer_id)]["source"] = (
            "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass"
        )
        expected = earned_points(source, every - {first.answer_id}, release)
    elif kind == "kernel-exit":
        nb["cells"][index_of(nb, second.answer_id)]["source"] = "import os\nos._exit(1)"
        expected = earned_points(source, every - {second.answer_id}, release)
    elif kind == "endless-print":
        nb["cells"][index_of(nb, first.answer_id)]["source"] = (
            "while True:\n    print('all work and no play ' * 4)"
        )
        expected = earned_points(source, every - {first.answer_id}, release)
    elif kind == "deleted-test":
        del nb["cells"][index_of(nb, first.test_ids[0])]
    elif kind == "deleted-setup":
        del nb["cells"][index_of(nb, "setup")]
    elif kind == "duplicated-test":
        i = index_of(nb, first.test_ids[0])
        nb["cells"].insert(i + 1, copy.deepcopy(nb["cells"][i]))
        nb["cells"][i + 1]["id"] = nb["cells"][i]["id"] + "-copy"
    elif kind == "retyped-test":
        cell = nb["cells"][index_of(nb, first.test_ids[0])]
        cell["cell_type"] = "markdown"
        cell.pop("outputs", None)
        cell.pop("execution_count", None)
    elif kind == "edited-test":
        release_answer = release["cells"][index_of(release, first.answer_id)]
        nb["cells"][index_of(nb, first.answer_id)]["source"] = cell_text(release_answer)
        nb["cells"][index_of(nb, first.test_ids[0])]["source"] = "pass"
        expected = earned_points(source, every - {first.answer_id}, release)
    else:
        raise ValueError(f"unknown kind {kind!r}; one of {sorted(ZOO)}")
    return json.dumps(nb, indent=1) + "\n", expected
