"""memkit: every computation, number and figure of the course "Transformers as memory".

The book shows; memkit computes. Modules, in the order of the course:

- ``linalg``: the readings of a product, rank, truncated SVD (Chapters 1-2, Appendix A)
- ``memory``: write rules and reading a store, signal and interference (Chapters 3-4)
- ``scores``: score functions and the MLP read V^T sigma(Kx) (Chapter 5)
- ``capacity``: closed forms and Monte Carlo estimates of every capacity (Chapters 3-6)
- ``attention``: softmax attention, its gradients, kernel and Hopfield readings, heads (6-8)
- ``block``: one transformer layer on the residual stream, pre- and post-norm (Chapter 8)
- ``recurrent``: linear attention as a state; add, decay, delta, gated delta, TTT (9-10)
- ``icl``: in-context regression, k layers as k gradient steps (Chapter 11)
- ``unified``: every layer as state, write and read; the collapse of D10 (Chapters 12-13)
- ``edit``: the rank-one edit with a key covariance (Chapter 14)
- ``rosetta``: other fields' names for the course's computations, checked (Chapter 15)
- ``costs``: parameter counts and cache bytes (Chapters 8-9)
- ``checks``: the model invariants; ``derivations``: D1-D20 verified with SymPy
- ``figures``: the interactive figures, by id; ``style``: the colour code
- ``validation``: the input checks every function above shares

The course's own machinery, imported by the assignments and the course's kernel, not by
the chapters:

- ``variants``: each student's own numbers in the assignments, drawn from the student id
- ``class_list``: the instructor's class list, each student's seat (the order of their
  options); ``make class-list``
- ``progress`` and ``setup_hint``: IPython extensions of the course's kernel (a running
  line under a long cell; a name used before the set-up cell ran, explained)

Every random draw goes through a ``seed`` argument (an int or a numpy Generator).
"""

__version__ = "0.1.0"
