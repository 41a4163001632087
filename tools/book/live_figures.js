/* The live figures of the HTML book (tools/book/live_figures.py writes their data and frames).
 *
 * Each figure cell is followed by <div class="memfig-live"> holding what memkit declares of
 * the figure: its alt text, its prompt, its controls and the reading of every state. When
 * the figure comes into view the player draws the prompt (what to drag, what to watch) and
 * the controls above the picture (a slider, a row of buttons, a picker or a toggle, with
 * the widget's labels and default), and on every change shows the frame of that state
 * (rendered at build time by the figure's own code) with its reading under it.
 *
 * For a screen reader: the picture's alt text says what it shows (one sentence, the same
 * in every state); the reading is a live region, announced once when it changes; a slider
 * announces its name, value and unit (aria-valuetext). The frames are drawn at twice the
 * picture's size (sharp on a 2x screen) and shown at its size, data.width x data.height
 * CSS pixels, or narrower: the picture shrinks to the column (memcourse.css), so that the
 * whole of it is in view on a phone. Where the window is narrow (data.narrow.media, a phone)
 * the frames are the narrow layout's (data.id/narrow/..., panels stacked, type of 11 CSS
 * px or more, data.narrow.width x data.narrow.height), chosen again when the window turns
 * or is resized. Nothing is fetched from another site; without JavaScript the page keeps
 * the default picture (a <picture> whose <source> is the narrow frame on a narrow window),
 * its alt text holding the reading.
 */
(function () {
  "use strict";

  function element(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function setup(root) {
    var data = JSON.parse(root.querySelector('script[type="application/json"]').textContent);
    var cell = root.previousElementSibling;
    var img = cell && cell.querySelector(".cell_output img");
    if (!img) return;
    var picture = img.closest("picture");  // the frames replace what its sources choose
    if (picture) {
      picture.parentNode.insertBefore(img, picture);
      picture.parentNode.removeChild(picture);
    }
    var narrow = data.narrow && window.matchMedia ? window.matchMedia(data.narrow.media) : null;
    var index = data.controls.map(function (c) { return c.default; });
    var prompt = element("p", "memfig-prompt", data.prompt);
    var panel = element("div", "memfig-controls");
    panel.setAttribute("role", "group");
    panel.setAttribute("aria-label", "controls of the figure " + data.id);
    var reading = element("p", "memfig-reading", data.frames[key(index)]);
    var cache = {};

    function key(at) { return at.join(","); }
    function isNarrow() { return Boolean(narrow && narrow.matches); }
    function source(k) {
      return data.base + data.id + "/" + (isNarrow() ? "narrow/" : "") + k.replace(/,/g, "-") + ".webp";
    }
    function prefetch(k) {
      var url = source(k);
      if (!cache[url] && data.frames[k] !== undefined) {
        cache[url] = new Image();
        cache[url].src = url;
      }
    }
    function size() {  // the frames' size in CSS pixels (they hold 2x the pixels)
      var shown = isNarrow() ? data.narrow : data;
      if (shown.width && shown.height) {
        img.width = shown.width;
        img.height = shown.height;
      }
    }
    // "query t°" at 50 is read "query t: 50 degrees"
    function spoken(control, i) {
      var name = control.label.replace(/°$/, "");
      return name + ": " + control.values[i] + (control.unit ? " " + control.unit : "");
    }
    function show() {
      var k = key(index);
      var url = source(k);
      if (img.getAttribute("src") !== url) img.src = url;
      if (reading.textContent !== data.frames[k]) reading.textContent = data.frames[k];
      root.dataset.state = k;
      index.forEach(function (value, i) {  // the neighbours a drag reaches next
        [-1, 1].forEach(function (step) {
          var at = index.slice();
          at[i] = value + step;
          prefetch(key(at));
        });
      });
    }

    data.controls.forEach(function (control, i) {
      var row = element("div", "memfig-control memfig-" + control.kind);
      var id = "memfig-" + data.id + "-" + control.name;
      var label = element("label", "memfig-label", control.label);
      label.htmlFor = id;
      row.appendChild(label);
      if (control.kind === "slider") {
        var slider = element("input");
        slider.type = "range";
        slider.id = id;
        slider.min = 0;
        slider.max = control.values.length - 1;
        slider.step = 1;
        slider.value = control.default;
        var readout = element("output", "memfig-readout", control.values[control.default]);
        readout.htmlFor = id;
        slider.setAttribute("aria-valuetext", spoken(control, control.default));
        slider.addEventListener("input", function () {
          index[i] = Number(slider.value);
          readout.textContent = control.values[index[i]];
          slider.setAttribute("aria-valuetext", spoken(control, index[i]));
          show();
        });
        row.appendChild(slider);
        row.appendChild(readout);
      } else if (control.kind === "picker") {
        var select = element("select");
        select.id = id;
        control.values.forEach(function (text, j) {
          var option = element("option", "", text);
          option.value = j;
          select.appendChild(option);
        });
        select.value = control.default;
        select.addEventListener("change", function () { index[i] = Number(select.value); show(); });
        row.appendChild(select);
      } else if (control.kind === "toggle") {
        var box = element("input");
        box.type = "checkbox";
        box.id = id;
        box.checked = control.default === 1;
        box.addEventListener("change", function () { index[i] = box.checked ? 1 : 0; show(); });
        row.appendChild(box);
      } else {  // a row of buttons, tabs or a pick: one pressed at a time
        var group = element("div", "memfig-buttons");
        group.setAttribute("role", "group");
        group.setAttribute("aria-label", control.label);
        var buttons = control.values.map(function (text, j) {
          var button = element("button", "memfig-button", text);
          button.type = "button";
          button.setAttribute("aria-pressed", String(j === control.default));
          button.addEventListener("click", function () {
            index[i] = j;
            buttons.forEach(function (b, n) { b.setAttribute("aria-pressed", String(n === j)); });
            show();
          });
          group.appendChild(button);
          return button;
        });
        if (buttons.length) buttons[0].id = id;
        row.appendChild(group);
      }
      panel.appendChild(row);
    });

    var output = img.closest(".cell_output") || img.parentNode;
    output.insertBefore(panel, output.firstChild);
    output.insertBefore(prompt, panel);
    var scroller = element("div", "memfig-scroll");
    img.parentNode.insertBefore(scroller, img);
    scroller.appendChild(img);
    scroller.insertAdjacentElement("afterend", reading);
    img.classList.add("memfig-picture");
    size();
    img.alt = data.alt;  // the reading, under the picture, is no longer in its alt text
    reading.setAttribute("aria-live", "polite");  // after it is in place: only changes are read
    reading.setAttribute("aria-atomic", "true");
    function ready() {
      root.dataset.ready = "true";
      show();
      if (narrow) {  // a phone turned, a window resized across the media query
        var relayout = function () { size(); show(); };
        if (narrow.addEventListener) narrow.addEventListener("change", relayout);
        else narrow.addListener(relayout);
      }
    }
    // the default picture loads lazily: let a load under way end before the first frame
    // replaces it (a replaced picture's request would be cut off)
    if (img.complete) ready();
    else {
      img.addEventListener("load", ready, { once: true });
      img.addEventListener("error", ready, { once: true });
      img.loading = "eager";
    }
  }

  function start() {
    var roots = Array.prototype.slice.call(document.querySelectorAll(".memfig-live"));
    if (!("IntersectionObserver" in window)) { roots.forEach(setup); return; }
    var pending = new Map();  // the figure's cell (before its data block) -> the block
    var observer = new IntersectionObserver(function (entries) {
      entries.forEach(function (entry) {
        if (entry.isIntersecting && pending.has(entry.target)) {
          observer.unobserve(entry.target);
          setup(pending.get(entry.target));
          pending.delete(entry.target);
        }
      });
    }, { rootMargin: "400px 0px" });
    roots.forEach(function (root) {
      var cell = root.previousElementSibling || root;
      pending.set(cell, root);
      observer.observe(cell);
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
