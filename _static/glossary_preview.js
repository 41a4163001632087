/* A glossary term's definition shown where its link is (every page of the HTML book).
 *
 * A link to an entry of Appendix E (a {term} role: `a[href*="#term-"]` round a term) shows,
 * when the pointer rests on it or the keyboard reaches it, a card with the entry's terms and
 * definition, taken from the glossary page (fetched once, then kept), its formulas as that
 * page holds them, typeset at build time (tools/book/typeset_maths.py): each draws its
 * characters from the outlines its page holds once (<svg id="MJX-SVG-global-cache">), and
 * the card brings along those this page lacks. The card follows WCAG 1.4.13: the pointer may move onto it, it stays while
 * the pointer is on the link or the card, and Escape closes it. The link is described by the
 * card while it shows (aria-describedby). A tap on a phone follows the link as before.
 */
(function () {
  "use strict";
  var SHOW_AFTER = 250;  // ms the pointer rests on a link before its card shows
  var HIDE_AFTER = 200;  // ms to move from the link onto the card
  var pages = {};  // glossary page URL -> Promise of its document
  var GLYPHS = "MJX-SVG-global-cache", SVG = "http://www.w3.org/2000/svg";
  var card = null, owner = null, showTimer = null, hideTimer = null;

  function glossaryOf(url) {
    if (url === location.href.split("#")[0]) return Promise.resolve(document);
    if (!pages[url]) {
      pages[url] = fetch(url).then(function (r) { return r.text(); }).then(function (text) {
        return new DOMParser().parseFromString(text, "text/html");
      });
    }
    return pages[url];
  }

  // the entry of the term with id `id`: its terms (the <dt>s before one <dd>) and the <dd>
  function entryOf(doc, id) {
    var dt = doc.getElementById(id);
    if (!dt || dt.tagName !== "DT") return null;
    var first = dt, last = dt;
    while (first.previousElementSibling && first.previousElementSibling.tagName === "DT") first = first.previousElementSibling;
    while (last.nextElementSibling && last.nextElementSibling.tagName === "DT") last = last.nextElementSibling;
    var dd = last.nextElementSibling;
    if (!dd || dd.tagName !== "DD") return null;
    var terms = [];
    for (var node = first; node && node.tagName === "DT"; node = node.nextElementSibling) {
      var copy = node.cloneNode(true);
      copy.querySelectorAll(".headerlink").forEach(function (a) { a.remove(); });
      terms.push(copy.textContent.trim());
    }
    return { terms: terms, definition: dd };
  }

  // the outlines of the characters the card's formulas draw, into this page's own
  function bringGlyphs(doc) {
    var source = doc.getElementById(GLYPHS);
    if (!source || doc === document) return;
    var glyphs = document.getElementById(GLYPHS);
    if (!glyphs) {
      glyphs = document.importNode(source, false);
      glyphs.appendChild(document.createElementNS(SVG, "defs"));
      document.body.appendChild(glyphs);
    }
    card.querySelectorAll("use").forEach(function (use) {
      var id = (use.getAttribute("xlink:href") || use.getAttribute("href") || "").slice(1);
      var outline = id && !document.getElementById(id) && doc.getElementById(id);
      if (outline) glyphs.firstElementChild.appendChild(document.importNode(outline, true));
    });
  }

  function theCard() {
    if (!card) {
      card = document.createElement("div");
      card.id = "memglossary-card";
      card.className = "memglossary-card";
      card.setAttribute("role", "tooltip");
      card.hidden = true;
      card.addEventListener("mouseenter", function () { clearTimeout(hideTimer); });
      card.addEventListener("mouseleave", hideSoon);
      document.body.appendChild(card);
    }
    return card;
  }

  function place(link) {
    var box = link.getBoundingClientRect(), width = card.offsetWidth;
    var left = Math.min(Math.max(8, box.left), document.documentElement.clientWidth - width - 8);
    card.style.left = (window.scrollX + Math.max(8, left)) + "px";
    card.style.top = (window.scrollY + box.bottom + 6) + "px";
  }

  function show(link) {
    var url = new URL(link.href);
    var page = url.href.split("#")[0];
    glossaryOf(page).then(function (doc) {
      var entry = entryOf(doc, decodeURIComponent(url.hash.slice(1)));
      if (!entry) return;
      theCard();
      card.textContent = "";
      var title = document.createElement("p");
      title.className = "memglossary-term";
      title.textContent = entry.terms.join(", ");
      card.appendChild(title);
      Array.prototype.forEach.call(entry.definition.children, function (child) {
        card.appendChild(document.importNode(child, true));
      });
      bringGlyphs(doc);
      // links of the entry lead where they led on the glossary page
      card.querySelectorAll("a[href]").forEach(function (a) {
        a.href = new URL(a.getAttribute("href"), page).href;
        a.tabIndex = -1;
      });
      if (owner && owner !== link) owner.removeAttribute("aria-describedby");
      owner = link;
      link.setAttribute("aria-describedby", card.id);
      card.hidden = false;
      place(link);
    }).catch(function () { /* no card without the glossary page: the link still works */ });
  }

  function hide() {
    clearTimeout(showTimer);
    clearTimeout(hideTimer);
    if (card) card.hidden = true;
    if (owner) owner.removeAttribute("aria-describedby");
    owner = null;
  }

  function hideSoon() {
    clearTimeout(showTimer);
    clearTimeout(hideTimer);
    hideTimer = setTimeout(hide, HIDE_AFTER);
  }

  function termLink(target) {
    var link = target && target.closest ? target.closest('a[href*="#term-"]') : null;
    return link && link.querySelector(".std-term") ? link : null;
  }

  function start() {
    var main = document.getElementById("main-content") || document.body;
    main.addEventListener("mouseover", function (event) {
      var link = termLink(event.target);
      if (!link) return;
      clearTimeout(hideTimer);
      if (link === owner) return;
      clearTimeout(showTimer);
      showTimer = setTimeout(function () { show(link); }, SHOW_AFTER);
    });
    main.addEventListener("mouseout", function (event) {
      var link = termLink(event.target);
      if (link && !link.contains(event.relatedTarget)) hideSoon();
    });
    main.addEventListener("focusin", function (event) {
      var link = termLink(event.target);
      if (link) { clearTimeout(hideTimer); show(link); }
    });
    main.addEventListener("focusout", function (event) {
      if (termLink(event.target)) hideSoon();
    });
    document.addEventListener("keydown", function (event) {
      if (event.key === "Escape" && card && !card.hidden) hide();
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
