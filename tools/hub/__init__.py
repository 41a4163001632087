"""The course on a JupyterHub, for the instructor who runs a class: its set-up and configuration.

    python -m tools.hub start [--port 8000] [--students 2]     (make hub, as root)
    python -m tools.hub stop                                    (make hub-stop)
    python -m tools.hub clear-exchange                          (make hub-clear-exchange)

==========================  ======================================================
``course_repo``             the course as the students pull it (nbgitpuller): a git
                            repository on the hub's machine, the book without solutions/
``shares``                  each student's share of the exchange (a file system of its
                            own) and the nbgrader plugins that hand in there
``exchange``                nbgrader's exchange: the course's folders laid out, a file
                            system of its own size, a collect that takes only each
                            student's own submissions (an nbgrader plugin)
``hub_exchange``            the exchange as a hub service that knows each caller from
                            their hub token: releases, submissions at the server's time,
                            feedback, each student's share (one-user mode, Kubernetes)
``hub_exchange_client``     nbgrader's exchange plugins that talk to that service
``user_files``              what each user's home gets: nbgrader's configuration; in
                            one-user mode the one Unix user and a home per student
``limits``                  each user's limits: a cgroup per server (memory, processes,
                            CPU), rlimits, a home of its own size
``processes``               the hub users' processes, found (psutil) and all ended; the
                            files the students left in /tmp, /dev/shm, /run/lock
``hub_api``                 what ``make hub-stop`` asks the running hub through its REST
                            API (the servers' PIDs), with a service token of its own
``staff``                   the course's graders (teaching assistants): nbgrader's
                            groups, the instructor's course folder shared by ACLs
``local``                   ``make hub``: a hub on this machine with real Unix users,
                            nbgrader's exchange and the course's lab per role
``jupyterhub_config.py``    the hub's configuration, read by JupyterHub (not imported)
``z2jh-values.yaml``        the same course on Kubernetes (Zero to JupyterHub's chart;
                            its values schema vendored in ``z2jh/``)
==========================  ======================================================

The package imports ``tools.lab`` (the lab each user gets) and ``tools.common`` (what a
student named, written as text), and nothing else of ``tools``.
"""
