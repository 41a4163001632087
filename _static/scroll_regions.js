/* Regions that scroll sideways get a tab stop (tools/book/accessible_html.py).
 *
 * On a narrow screen a display equation or a wide table keeps its size and scrolls sideways
 * (memcourse.css) instead of running off the page (a figure's picture shrinks to the column);
 * so does an inline formula wider than its paragraph, set on a line of its own (.memwide). A region that scrolls must be
 * reachable from the keyboard (WCAG 2.1.1), so while it does scroll it gets tabindex 0, and
 * loses it when the window grows and it fits again (no tab stop that does nothing). The
 * theme does the same for code blocks and cell outputs.
 */
(function () {
  "use strict";
  var SELECTOR = 'mjx-container[display="true"], mjx-container.memwide, .bd-article table.table';
  var INLINE = 'mjx-container[jax="CHTML"]:not([display="true"])';
  var pending = null;

  function mark() {
    pending = null;
    document.querySelectorAll(INLINE).forEach(function (math) {
      var block = math.parentElement && math.parentElement.closest("p, li, dd, td, th, div");
      math.classList.remove("memwide");
      if (block && math.getBoundingClientRect().width > block.clientWidth + 1) {
        math.classList.add("memwide");
      }
    });
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
    var main = document.getElementById("main-content") || document.body;
    new MutationObserver(later).observe(main, { subtree: true, childList: true });
    later();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
