"""The book's build, for readers of the HTML and PDF books: what runs before and inside Sphinx.

In the order a build uses them (``make book``, ``make pdf``):

======================  ==========================================================
``vendor_mathjax``      before the build: MathJax from the npm registry, served by
                        the book itself (``python -m tools.book.vendor_mathjax``)
``toc``                 the chapters and parts of ``_toc.yml``
``execution_cache``     before the build: the cache dropped when memkit changed, the
                        chapters not in it executed in parallel
                        (``python -m tools.book.execution_cache``)
``live_figures``        Sphinx extension: every figure of the HTML book live, from
                        frames rendered at build time (with ``live_figures.js``)
``offline_html``        Sphinx extension: the HTML loads nothing from another site
``pdf_badges``          Sphinx extension: the status badges drawn as badges in print
``pdf_book``            Sphinx extension: the PDF's numbering, index and lists
======================  ==========================================================

``_config.yml`` loads the extensions by these module names (``local_extensions``). No
module of this package imports another package of ``tools``.
"""
