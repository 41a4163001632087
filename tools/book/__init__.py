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
``accessible_html``     Sphinx extension: what WCAG 2.1 AA needs beyond the theme's
                        templates (``_templates/``): folded cells named by the words
                        they show
``lean_pages``          Sphinx extension: Font Awesome's fonts cut down to the icons
                        the pages use
``study_time``          Sphinx extension: each session's expected time (reading,
                        figures, exercises) counted from its material, for its
                        session page and Chapter 0's table
``take_away``           Sphinx extension: where the course is (the repository's
                        address in the pages), each page's notebook and the whole
                        PDF in its download menu
``search_page``         Sphinx extension: the search page's snippets with their
                        formulas typeset (with ``search_snippets.js``)
``typeset_maths``       Sphinx extension: every formula of the pages typeset into SVG
                        at build time by MathJax in Node (with ``typeset_maths.js``),
                        cached by its TeX; no page loads MathJax but the search page
``stable_layout``       Sphinx extension: every picture's size written into its page,
                        so that the layout does not move when it arrives
``serve``               after the build: the HTML book served as a web host serves
                        it, text gzip-compressed (``python -m tools.book.serve``,
                        Lighthouse in ``make bench``), or every file as it is
                        (``--plain``: the browser tests, a page's first load)
``pdf_badges``          Sphinx extension: the status badges drawn as badges in print
``pdf_book``            Sphinx extension: the PDF's numbering, index and lists
======================  ==========================================================

``_config.yml`` loads the extensions by these module names (``local_extensions``). No
module of this package imports another package of ``tools``.
"""
