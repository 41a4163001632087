/* Regions that scroll sideways get a tab stop (tools/book/accessible_html.py).
 *
 * On a narrow screen a display equation, or an inline one wider than its line, keeps its
 * size and scrolls sideways (memcourse.css) instead of running off the page or being cut
 * off (a figure's picture shrinks to the column instead). A region that scrolls must be
 * reachable from the keyboard (WCAG 2.1.1), so while it does scroll it gets tabindex 0, and
 * loses it when the window grows and it fits again (no tab stop that does nothing). The
 * theme does the same for code blocks and cell outputs.
 */
(function () {
  "use strict";
  var SELECTOR = 'mjx-container[display="true"], span.math';
  var pending = null;

  function mark() {
    pending = null;
    document.querySelectorAll(SELECTOR).forEach(function (region) {
      if (region.scrollWidth > region.clientWidth + 1) region.tabIndex = 0;
      else region.removeAttribute("tabindex");
    });
  }

  function later() {
    if (pending === null) pending = setTimeout(mark, 200);
  }

  function start() {
    window.addEventListener("resize", later);
    document.addEventListener("load", later, true);  // a picture's width is known once loaded
    // a formula's width changes, with no change to the page, when MathJax's fonts arrive
    if (document.fonts) document.fonts.addEventListener("loadingdone", later);
    var main = document.getElementById("main-content") || document.body;
    new MutationObserver(later).observe(main, { subtree: true, childList: true });
    later();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
