/* ragmeter pages: shared helpers (window.RM). Every node is built with createElement and
   textContent: data is never parsed as HTML, and no attribute named on* is ever set. */
"use strict";
(function () {
  const RM = {};
  const SVG_NS = "http://www.w3.org/2000/svg";

  RM.data = function () {
    return JSON.parse(document.getElementById("ragmeter-data").textContent);
  };

  function setAttrs(node, attrs) {
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "on") {
        for (const [ev, fn] of Object.entries(v)) node.addEventListener(ev, fn);
      } else if (/^on/i.test(k) || k === "href" || k === "src" || k === "srcdoc") {
        throw new Error("RM.el: attribute " + k + " is not allowed (use RM.link for links)");
      } else {
        node.setAttribute(k, v === true ? "" : String(v));
      }
    }
  }

  function append(node, children) {
    for (const c of children) {
      if (c === null || c === undefined || c === false) continue;
      if (Array.isArray(c)) append(node, c);
      else if (c instanceof Node) node.appendChild(c);
      else node.appendChild(document.createTextNode(String(c)));
    }
    return node;
  }

  /* Append children (strings as text, nodes, nested arrays; null skipped) to node. */
  RM.add = function (node, ...children) { return append(node, children); };

  /* el("div", {class: "x", on: {click: f}}, "text", child, [more]) */
  RM.el = function (tag, attrs, ...children) {
    const node = document.createElement(tag);
    setAttrs(node, attrs);
    return append(node, children);
  };

  RM.svg = function (tag, attrs, ...children) {
    const node = document.createElementNS(SVG_NS, tag);
    setAttrs(node, attrs);
    return append(node, children);
  };

  /* A link to a path of this site (for `ragmeter view`): only "/..." or "?..." paths. */
  RM.link = function (path, ...children) {
    const p = String(path);
    if (!/^\/(?!\/)|^\?/.test(p)) throw new Error("RM.link: not a local path");
    const a = append(document.createElement("a"), children);
    a.setAttribute("href", p);
    return a;
  };

  RM.fmt = function (x, digits) {
    if (x === null || x === undefined) return "\u2014";
    if (typeof x !== "number") return String(x);
    return x.toFixed(digits === undefined ? 3 : digits);
  };

  RM.pct = function (x) {
    return x === null || x === undefined ? "\u2014" : (100 * x).toFixed(0) + "%";
  };

  RM.int = function (x) {
    return x === null || x === undefined ? "\u2014" : Number(x).toLocaleString("en-US");
  };

  /* First n characters of s on one line (for table cells). */
  RM.preview = function (s, n) {
    if (s === null || s === undefined) return "";
    const t = String(s).slice(0, (n || 200) + 1).replace(/\s+/g, " ");
    return t.length > (n || 200) ? t.slice(0, n || 200) + "\u2026" : t;
  };

  /* A histogram {lo, hi, counts} as an inline SVG. */
  RM.histogram = function (hist, opts) {
    const w = (opts && opts.width) || 200, h = (opts && opts.height) || 64, pad = 12;
    const counts = hist.counts, n = counts.length, max = Math.max(1, ...counts);
    const bw = (w - 2) / n;
    const svg = RM.svg("svg", {class: "hist", width: w, height: h + pad, viewBox: "0 0 " + w + " " + (h + pad),
      role: "img", "aria-label": "distribution of the scores"});
    counts.forEach(function (c, i) {
      const bh = c === 0 ? 0 : Math.max(1, (h - 2) * c / max);
      const a = hist.lo + (hist.hi - hist.lo) * i / n, b = hist.lo + (hist.hi - hist.lo) * (i + 1) / n;
      svg.appendChild(RM.svg("rect", {class: "bar", x: 1 + i * bw, y: h - bh, width: Math.max(1, bw - 1), height: bh},
        RM.svg("title", {}, c + " in [" + RM.fmt(a, 2) + ", " + RM.fmt(b, 2) + (i === n - 1 ? "]" : ")"))));
    });
    svg.appendChild(RM.svg("line", {x1: 0, x2: w, y1: h, y2: h, stroke: "#99a3ad"}));
    svg.appendChild(RM.svg("text", {x: 0, y: h + pad - 2}, RM.fmt(hist.lo, 2)));
    svg.appendChild(RM.svg("text", {x: w, y: h + pad - 2, "text-anchor": "end"}, RM.fmt(hist.hi, 2)));
    return svg;
  };

  /* text with the spans [start, end, className, title] marked; overlapping spans after the first are dropped. */
  RM.highlight = function (text, spans) {
    const frag = document.createDocumentFragment();
    const sorted = (spans || []).filter(function (s) { return s[1] > s[0]; })
      .sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });
    let at = 0;
    for (const s of sorted) {
      if (s[0] < at) continue;
      if (s[0] > at) frag.appendChild(document.createTextNode(text.slice(at, s[0])));
      frag.appendChild(RM.el("mark", {class: s[2], title: s[3]}, text.slice(s[0], s[1])));
      at = s[1];
    }
    if (at < text.length) frag.appendChild(document.createTextNode(text.slice(at)));
    return frag;
  };

  /* Rows rendered lazily: only those in view (plus a margin) exist in the DOM. */
  RM.VirtualRows = class {
    constructor(viewport, rowHeight, renderRow) {
      this.viewport = viewport;
      this.rowHeight = rowHeight;
      this.renderRow = renderRow;
      this.count = 0;
      this.spacer = RM.el("div", {class: "spacer"});
      this.viewport.appendChild(this.spacer);
      this.rendered = new Map();
      this.pending = false;
      this.viewport.addEventListener("scroll", () => this.schedule());
      window.addEventListener("resize", () => this.schedule());
    }
    setCount(n) {
      this.count = n;
      this.spacer.style.height = n * this.rowHeight + "px";
      for (const node of this.rendered.values()) node.remove();
      this.rendered.clear();
      this.update();
    }
    refresh() { this.setCount(this.count); }
    schedule() {
      if (this.pending) return;
      this.pending = true;
      window.requestAnimationFrame(() => { this.pending = false; this.update(); });
    }
    scrollTo(i) {
      const top = i * this.rowHeight, vh = this.viewport.clientHeight;
      if (top < this.viewport.scrollTop || top + this.rowHeight > this.viewport.scrollTop + vh) {
        this.viewport.scrollTop = Math.max(0, top - vh / 3);
      }
      this.update();
    }
    update() {
      const vh = this.viewport.clientHeight || 600;
      const first = Math.max(0, Math.floor(this.viewport.scrollTop / this.rowHeight) - 20);
      const last = Math.min(this.count, Math.ceil((this.viewport.scrollTop + vh) / this.rowHeight) + 20);
      for (const [i, node] of this.rendered) {
        if (i < first || i >= last) { node.remove(); this.rendered.delete(i); }
      }
      for (let i = first; i < last; i++) {
        if (this.rendered.has(i)) continue;
        const node = this.renderRow(i);
        node.style.top = i * this.rowHeight + "px";
        node.style.height = this.rowHeight + "px";
        this.viewport.appendChild(node);
        this.rendered.set(i, node);
      }
    }
  };

  window.RM = RM;
})();
