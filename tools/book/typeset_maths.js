/* Every formula of a batch typeset into SVG by MathJax 3 in Node (tools/book/typeset_maths.py).
 *
 *     node typeset_maths.js < request.json > answer.json
 *
 * The request is one JSON object: `entry`, the path of MathJax's entry for Node
 * (es5/node-main.js, tools/book/vendor_mathjax.py), `components`, the folder of its
 * components (es5/), `config`, the book's MathJax configuration (_config.yml's
 * mathjax3_config, its loader's output set to SVG by the caller), and `formulas`, a list of
 * {tex, display}. The answer is a JSON object: `formulas`, a list, in the request's order, of
 * each formula as the HTML of its <mjx-container>: the SVG drawn (aria-hidden) and the
 * formula as MathML for a screen reader (<mjx-assistive-mml>, with the a11y/assistive-mml
 * component); and `glyphs`, the outline of each character they draw, by its id (the
 * configuration's fontCache "global": a formula draws a character as <use> of the
 * <path> of that id, which the page holds once). One process typesets the whole batch; a
 * TeX package a formula needs is loaded on the way (autoload: tex2svgPromise waits for it).
 */
"use strict";

const fs = require("fs");

async function main() {
  const request = JSON.parse(fs.readFileSync(0, "utf8"));
  const config = request.config;
  config.loader = Object.assign({}, config.loader, {
    paths: Object.assign({}, (config.loader || {}).paths, { mathjax: request.components }),
  });
  const MathJax = await require(request.entry).init(config);
  const adaptor = MathJax.startup.adaptor;
  const formulas = [];
  for (const formula of request.formulas) {
    const node = await MathJax.tex2svgPromise(formula.tex, { display: formula.display });
    formulas.push(adaptor.outerHTML(node));
  }
  const glyphs = {};
  for (const path of adaptor.childNodes(MathJax.startup.output.fontCache.defs)) {
    glyphs[adaptor.getAttribute(path, "id")] = adaptor.outerHTML(path);
  }
  process.stdout.write(JSON.stringify({ formulas, glyphs }));
}

main().catch((error) => {
  process.stderr.write(String(error && error.stack || error) + "\n");
  process.exit(1);
});
