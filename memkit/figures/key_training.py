"""Figure key-training (Chapter 7): gradient descent turns the right key toward the query.

Three unit keys in the plane hold the scalar values -1, 0.2 and 1; the copper
query q = (1, 0) reads them with a softmax, and the loss (o - 1)^2 / 2 asks for the
output 1. Drag the number of gradient steps on the keys: key 2, the one holding
the target value, rotates toward q, its weight a_2 grows and the output o climbs
toward the target, while key 0, worse than the current answer, is pushed away.
Each key is rescaled to unit length after every step, so it can only rotate.
"""

from __future__ import annotations

import functools

import ipywidgets as widgets
import numpy as np

from matplotlib.collections import PathCollection
from matplotlib.transforms import Affine2D

from memkit import attention, style
from memkit.figures.base import InteractiveFigure, text_outline, panels

#: initial directions of the three keys, in degrees
KEY_ANGLES = np.array([60.0, 150.0, 100.0])
VALUES = np.array([-1.0, 0.2, 1.0])
QUERY = np.array([1.0, 0.0])
TARGET = 1.0
BETA, ETA, MAX_STEPS = 3.0, 0.1, 40
TARGET_KEY = 2


@functools.lru_cache(maxsize=1)
def _trajectory():
    K = np.column_stack([np.cos(np.radians(KEY_ANGLES)), np.sin(np.radians(KEY_ANGLES))])
    return attention.train_keys(K, VALUES, QUERY, TARGET, BETA, ETA, MAX_STEPS)


def key_training(steps: int) -> dict:
    """The soft dictionary of the figure after ``steps`` gradient steps on its keys.

    Uses :func:`memkit.attention.train_keys` (beta = 3, eta = 0.1) on three unit keys
    (angles KEY_ANGLES) with values VALUES, query (1, 0), target 1. Returns steps,
    keys (3, 2) unit rows, weights a (3,), output o, the angle of each key in
    degrees (3,), the cosine of key 2 with q, and the whole curves of o and a_2
    (MAX_STEPS + 1,) for the right panel.
    """
    steps = int(steps)
    if not 0 <= steps <= MAX_STEPS:
        raise ValueError(f"steps must be in [0, {MAX_STEPS}], got {steps}")
    run = _trajectory()
    keys = run.keys[steps]
    return {
        "steps": steps,
        "keys": keys,
        "weights": run.weights[steps],
        "output": float(run.outputs[steps]),
        "angles": np.degrees(np.arctan2(keys[:, 1], keys[:, 0])),
        "cos_target": float(keys[TARGET_KEY] @ QUERY),
        "output_curve": run.outputs,
        "weight_curve": run.weights[:, TARGET_KEY],
    }


class KeyTrainingFigure(InteractiveFigure):
    id = "key-training"
    chapter = "7"
    size = (7.6, 3.3)
    narrow_size = (4.4, 5.8)
    alt_text = ("Left, three unit keys in the plane and the copper query, each key's dot sized "
                "by its weight; right, the read climbing toward its target over the gradient "
                "steps.")
    prompt = ("Drag the number of gradient steps: the key holding the target value turns toward "
              "the query, its dot grows and the read climbs to the target.")
    compute = staticmethod(key_training)

    def make_controls(self):
        return {"steps": widgets.IntSlider(value=6, min=0, max=MAX_STEPS, step=1,
                                           description="steps")}

    def build(self, figure):
        self.ax_keys, self.ax_curve = panels(
            figure, self.layout, 2, [1, 1.3], heights=[1.3, 1],
            wide=dict(left=0.03, right=0.97, top=0.88, bottom=0.22, wspace=0.25))
        circle = np.linspace(0, 2 * np.pi, 200)
        ax = self.ax_keys
        ax.plot(np.cos(circle), np.sin(circle), color=style.NEUTRAL, lw=0.6)
        ax.arrow(0, 0, *QUERY, color=style.QUERY, width=0.03, head_width=0.11, head_length=0.13,
                 length_includes_head=True)
        ax.text(1.08, -0.14, "q", color=style.QUERY, fontsize=11)
        zeros = np.zeros(3)
        self.arrows = ax.quiver(zeros, zeros, zeros, zeros, color=style.KEY, angles="xy",
                                scale_units="xy", scale=1, width=0.012)
        self.dots = ax.scatter(zeros, zeros, s=zeros, color=style.KEY, alpha=0.35, zorder=3)
        # the key labels as outlines in one collection (three mathtext Texts cost more)
        paths = [text_outline(f"$k_{i}$ (v={v:g})", self.pt(8)) for i, v in enumerate(VALUES)]
        self.labels = PathCollection(paths, offsets=np.zeros((3, 2)), offset_transform=ax.transData,
                                     transform=Affine2D().scale(figure.dpi / 72),
                                     edgecolors="none", facecolors=style.KEY)
        self.labels.set_clip_on(False)
        ax.add_collection(self.labels, autolim=False)
        ax.set_xlim(-1.45, 1.45)
        ax.set_ylim(-1.2, 1.45)
        ax.set_aspect("equal")
        ax.axis("off")
        ax.set_title("unit keys (dot size = weight $a_i$)")

        ax = self.ax_curve
        steps = np.arange(MAX_STEPS + 1)
        run = _trajectory()
        ax.axhline(TARGET, color=style.INK, lw=0.8, ls="--")
        ax.text(MAX_STEPS, TARGET + 0.04, "target", color=style.INK, ha="right", va="bottom",
                fontsize=8)
        ax.plot(steps, run.outputs, color=style.VALUE, lw=1.2, label="output $o$")
        ax.plot(steps, run.weights[:, TARGET_KEY], color=style.KEY, lw=1.2, label="weight $a_2$")
        (self.now,) = ax.plot([], [], "o", color=style.INK, ms=5)
        self.cursor = ax.axvline(0, color=style.NEUTRAL, lw=0.8)
        ax.set_xlim(0, MAX_STEPS)
        ax.set_ylim(-0.7, 1.15)
        ax.set_xlabel("gradient steps on the keys")
        ax.legend(loc="lower right", fontsize=8)
        ax.set_title("the read climbs to the target")
        self.dynamic(self.arrows, self.dots, self.labels, self.now, self.cursor)

    def draw(self, data):
        keys = data["keys"]
        self.arrows.set_UVC(keys[:, 0], keys[:, 1])
        self.dots.set_offsets(keys)
        self.dots.set_sizes(600 * data["weights"])
        self.labels.set_offsets(1.25 * keys)
        s = data["steps"]
        self.now.set_data([s, s], [data["output"], data["weights"][TARGET_KEY]])
        self.cursor.set_xdata([s, s])

    def describe(self, data):
        return (f"{data['steps']} steps: key 2 at {data['angles'][TARGET_KEY]:.0f}° from q, "
                f"a_2 = {data['weights'][TARGET_KEY]:.2f}, o = {data['output']:+.2f} (target 1)")


FIGURE = KeyTrainingFigure
