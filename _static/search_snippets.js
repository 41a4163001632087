/* The search page's snippets with their formulas typeset (tools/book/search_page.py).
 *
 * Sphinx writes a result's snippet from the text of the page it found (Search.htmlToText),
 * where each formula is typeset already, as SVG with its MathML (tools/book/typeset_maths.py):
 * each formula's text is first made its TeX again, which its wrapper keeps (data-tex). A
 * snippet is then 240 characters in which a formula is its LaTeX source, \( ... \), and
 * may be cut at either end. Each
 * snippet, as it arrives, loses the piece of a formula cut at its start or end, is typeset
 * by the page's MathJax, and gets the search's words highlighted again (Sphinx's own
 * _highlightText, after the typesetting, so that no highlight splits a formula). Other
 * pages: nothing.
 */
(function () {
  "use strict";
  var OPEN = "\\(", CLOSE = "\\)";

  // a formula cut by the snippet's ends: a "\)" before any "\(" and a "\(" never closed
  function whole(text) {
    var open = text.indexOf(OPEN), close = text.indexOf(CLOSE);
    if (close !== -1 && (open === -1 || close < open)) text = "..." + text.slice(close + CLOSE.length);
    var lastOpen = text.lastIndexOf(OPEN);
    if (lastOpen !== -1 && text.indexOf(CLOSE, lastOpen) === -1) text = text.slice(0, lastOpen) + "...";
    return text;
  }

  function highlight(snippet) {
    if (typeof _highlightText !== "function") return;  // sphinx_highlight.js
    var words = (new URLSearchParams(location.search).get("q") || "").toLowerCase().split(/\s+/);
    words.filter(Boolean).forEach(function (word) { _highlightText(snippet, word, "highlighted"); });
  }

  function typeset(snippet) {
    snippet.textContent = whole(snippet.textContent);  // plain text again: no highlight inside a formula
    if (window.MathJax && MathJax.typesetPromise) {
      MathJax.typesetPromise([snippet]).then(function () { highlight(snippet); }).catch(function () {});
    } else {
      highlight(snippet);
    }
  }

  // the page's HTML with each typeset formula's text its TeX source
  function withTex(htmlString) {
    var doc = new DOMParser().parseFromString(htmlString, "text/html");
    doc.querySelectorAll(".math[data-tex]").forEach(function (math) {
      math.textContent = math.getAttribute("data-tex");
    });
    return doc.documentElement.outerHTML;
  }

  function start() {
    var results = document.getElementById("search-results");
    if (!results) return;
    if (typeof Search !== "undefined" && Search.htmlToText) {  // searchtools.js
      var toText = Search.htmlToText;
      Search.htmlToText = function (htmlString, anchor) { return toText(withTex(htmlString), anchor); };
    }
    new MutationObserver(function (changes) {
      changes.forEach(function (change) {
        change.addedNodes.forEach(function (node) {
          if (node.nodeType !== 1) return;
          if (node.matches("p.context")) typeset(node);
          else node.querySelectorAll && node.querySelectorAll("p.context").forEach(typeset);
        });
      });
    }).observe(results, { subtree: true, childList: true });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
