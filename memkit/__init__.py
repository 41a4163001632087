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
- ``variants``: each student's own numbers in the assignments, drawn from the student id

Every random draw goes through a ``seed`` argument (an int or a numpy Generator).
"""

__version__ = "0.1.0"
