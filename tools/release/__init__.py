"""The release of the assignments, for the instructor: what students receive, from solutions/.

    python -m tools.release            regenerate exercises/ and book/session-N.md (make assignments)
    python -m tools.release --check    only say whether they are up to date

In the order data flows through them:

====================  ============================================================
``layout``            where the assignments live: solutions/ (nbgrader's source),
                      exercises/ (its release), how a session's folder is named
``schedule``          the term's due dates (schedule.yml), in one place, and the
                      students' extensions (extensions.yml)
``due_header``        the due date in each released notebook's header (an nbgrader
                      preprocessor of generate_assignment)
``session_pages``     the book's page of each session, rendered from the release
``start_page``        start.md, where a student lands on the hub: the sessions, their
                      chapters, assignments and due dates
``assignments``       the release itself: nbgrader generate_assignment, checked for
                      leaked solutions, then the session pages; nbgrader's environment
====================  ============================================================

Each module imports only the ones above it.
"""
