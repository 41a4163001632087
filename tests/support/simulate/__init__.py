"""A simulated class, the grader's test helper: submissions with the score each should get.

    python -m tests.support.simulate --students 20 [--zoo] [--zip class.zip] ...

==============  ===============================================================
``answers``     the honest students: answers filled in, the points they earn
``shared_numbers`` a classmate's values typed in (every student draws their
                own numbers, so they lose the questions whose answers depend on them)
``trouble``     broken files and answers that misbehave (``ZOO``)
``attacks``     submissions that attack the grader (``ATTACKS``)
``attacks_files`` the second round (``SECOND_ROUND``): links, special files, JSON bombs,
                the check flooded, the tests read, scripts, time and disk
``disguised_copy`` a class in which two students copied each other's code (the
                similarity report's test): honest students in styles of their own, a
                disguised copy
``abilities``   students of different abilities (the Rasch model) and questions broken
                on purpose, a wrong key or a slip accepted (the item analysis's test)
``classroom``   a class of them written as nbgrader's submitted/ tree or a zip
==============  ===============================================================

Used by the tests (``from support.simulate import classroom``) and the benchmarks
(``benchmarks/grading.py``, ``benchmarks/similarity.py``: ``tests.support.simulate``);
nothing of ``tools`` imports it.
"""
