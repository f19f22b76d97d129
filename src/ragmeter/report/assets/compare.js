/* ragmeter comparison: two runs side by side. The header and the warning when the runs are not
   comparable, one row per metric, the matched samples (sorted by how much they moved, filtered,
   rendered lazily) and, for a chosen sample, run A and run B next to each other.
   Reads RM.data() (ragmeter.report.compare_html.comparison_data). */
(function () {
  const {el, fmt} = RM;
  const V = RM.sampleView;
  const D = RM.data();
  const C = D.comparison, names = D.metric_names, pairs = D.pairs, runs = D.runs;
  /* B's contexts are left out of the data when they equal A's */
  for (const p of pairs) if (p.b.contexts === null) p.b.contexts = p.a.contexts;
  const higher = names.map(function (n) { return C.metrics[n].higher_is_better; });
  const app = document.getElementById("app");
  const ROW_H = 28;

  /* ---------------------------------------------------------------- header */
  function runBox(label, r) {
    const judge = r.judge || {};
    return el("div", {class: "run", "data-run": label},
      el("h2", {}, "run " + label),
      V.dl([
        ["run", r.run_id + (r.status === "finished" ? "" : "  (status: " + r.status + ")")],
        ["data", (r.source || "<data>") + (r.dataset_hash ? "  \u00b7 hash " + String(r.dataset_hash).slice(0, 12) : "")],
        ["judge", [judge.name, judge.model].filter(Boolean).join(" \u00b7 ") || "?"],
        ["created", r.created_at],
        ["samples", RM.int(r.n_samples)],
      ]));
  }

  function header() {
    return el("section", {id: "header"},
      el("h1", {}, "ragmeter compare"),
      el("div", {class: "sides"}, runBox("A", runs.a), runBox("B", runs.b)),
      el("p", {id: "counts"}, RM.int(C.n_matched) + " matched samples, " + RM.int(C.n_only_a) + " only in A, " +
        RM.int(C.n_only_b) + " only in B"));
  }

  function warning() {
    if (C.comparable) return null;
    return el("section", {id: "not-comparable", class: "panel warning"},
      el("h2", {class: "bad"}, "NOT COMPARABLE: read the differences with care"),
      el("ul", {}, C.issues.map(function (i) { return el("li", {}, i); })));
  }

  /* ---------------------------------------------------------------- metrics */
  /* the verdict is computed once, in Python (MetricComparison.verdict): the CI and the newly invalid samples */
  function verdict(m) {
    if (m.verdict === "worse") {
      return el("span", {class: "badge bad", title: m.n_new_invalid > C.max_new_invalid
        ? m.n_new_invalid + " sample(s) valid in A have no valid score in B (allowed: " + C.max_new_invalid + ")"
        : "the 95% CI of B \u2212 A is beyond \u2212margin"}, "worse");
    }
    if (m.verdict === "better") return el("span", {class: "badge good"}, "better");
    return el("span", {class: "muted"}, m.verdict);
  }

  function signed(x, digits) { return x === null || x === undefined ? "\u2014" : (x > 0 ? "+" : "") + fmt(x, digits); }

  function metricsTable() {
    const head = ["metric", "mean A", "mean B", "B \u2212 A", "95% CI", "p", "B better / tie / worse", "pairs",
      "invalid A / B", "newly invalid / valid in B", "verdict"];
    return el("table", {class: "t", id: "metrics"},
      el("thead", {}, el("tr", {}, head.map(function (h) { return el("th", {}, h); }))),
      el("tbody", {}, names.map(function (n, k) {
        const m = C.metrics[n];
        return el("tr", {"data-metric": n},
          el("td", {}, n + (higher[k] ? "" : " (lower is better)")),
          el("td", {class: "num"}, fmt(m.mean_a)), el("td", {class: "num"}, fmt(m.mean_b)),
          el("td", {class: "num"}, signed(m.diff)),
          el("td", {class: "num"}, m.ci95 === null ? "\u2014" : "[" + signed(m.ci95[0]) + ", " + signed(m.ci95[1]) + "]"),
          el("td", {class: "num"}, m.p_value === null ? "\u2014" : m.p_value.toPrecision(3)),
          el("td", {class: "num"}, m.wins + " / " + m.ties + " / " + m.losses),
          el("td", {class: "num"}, RM.int(m.n_pairs)),
          el("td", {class: "num"}, m.n_invalid_a + " / " + m.n_invalid_b),
          el("td", {class: "num" + (m.n_new_invalid ? " bad" : ""), "data-col": "new-invalid"},
            m.n_new_invalid + " / " + m.n_new_valid),
          el("td", {"data-col": "verdict"}, verdict(m)));
      })));
  }

  /* the calibrated B - A of each metric both runs have labels of (on people's scale; the table's CI is the judge's) */
  function calibratedNote() {
    const lines = names.filter(function (n) { return C.metrics[n].calibrated; }).map(function (n) {
      const c = C.metrics[n].calibrated;
      if (c.diff === null || c.diff === undefined) {
        return el("li", {}, n + ": " + c.n_labels + " pair(s) labelled in both runs; " + c.needed + " more for a calibrated difference");
      }
      return el("li", {}, n + " calibrated to people's labels: B \u2212 A ", el("b", {}, signed(c.diff)),
        " [" + signed(c.ci95[0]) + ", " + signed(c.ci95[1]) + "] (PPI++, " + c.n_labels + " pairs labelled in both runs)");
    });
    return lines.length ? el("ul", {id: "calibrated"}, lines) : null;
  }

  /* ---------------------------------------------------------------- matched samples */
  const state = {metric: 0, dir: 1, text: "", show: ""};
  let order = [];
  let selected = -1;
  let haystack = null;

  function value(j) { return j === null || j.error ? null : j.value; }
  function valid(j) { return value(j) !== null; }

  /* B's gain on metric k for pair i: positive when B is better; null when a side has no valid score */
  function gain(i, k) {
    const a = value(pairs[i].a.scores[k]), b = value(pairs[i].b.scores[k]);
    if (a === null || b === null) return null;
    return higher[k] ? b - a : a - b;
  }

  function searchText(i) {
    if (haystack === null) haystack = new Array(pairs.length);
    if (haystack[i] === undefined) {
      const p = pairs[i], parts = [p.key];
      for (const s of [p.a, p.b]) {
        parts.push(s.id, s.question, s.answer, s.reference);
        for (const j of s.scores) if (j) parts.push(j.reason);
      }
      haystack[i] = parts.filter(function (x) { return x; }).join("\n").toLowerCase();
    }
    return haystack[i];
  }

  function keep(i) {
    if (state.show) {
      const g = gain(i, state.metric);
      if (state.show === "changed" && (g === null || Math.abs(g) <= 1e-6)) return false;
      if (state.show === "worse" && (g === null || g >= -1e-6)) return false;
      if (state.show === "better" && (g === null || g <= 1e-6)) return false;
      if (state.show === "unpaired" && g !== null) return false;
      if (state.show === "new-invalid" && !(valid(pairs[i].a.scores[state.metric]) && !valid(pairs[i].b.scores[state.metric]))) return false;
      if (state.show === "new-valid" && !(valid(pairs[i].b.scores[state.metric]) && !valid(pairs[i].a.scores[state.metric]))) return false;
    }
    return !state.text || searchText(i).indexOf(state.text) >= 0;
  }

  function recompute() {
    order = [];
    for (let i = 0; i < pairs.length; i++) if (keep(i)) order.push(i);
    const k = state.metric;
    order.sort(function (x, y) {
      const gx = gain(x, k), gy = gain(y, k);
      if ((gx === null) !== (gy === null)) return gx === null ? 1 : -1;
      if (gx !== null && gx !== gy) return state.dir * (gx - gy);
      return x - y;
    });
    count.textContent = order.length === pairs.length ? pairs.length + " matched samples"
      : order.length + " of " + pairs.length + " matched samples";
    rows.setCount(order.length);
  }

  const cols = "minmax(90px, 200px) minmax(200px, 1fr)" + names.map(function () { return " 220px"; }).join("");
  const search = el("input", {type: "search", id: "q", placeholder: "search questions, answers, reasons\u2026",
    "aria-label": "search"});
  const metricSel = el("select", {id: "f-metric", "aria-label": "metric to sort and filter by"},
    names.map(function (n, k) { return el("option", {value: k}, n); }));
  const showSel = el("select", {id: "f-show", "aria-label": "which samples"},
    el("option", {value: ""}, "all samples"), el("option", {value: "changed"}, "score changed"),
    el("option", {value: "worse"}, "worse in B"), el("option", {value: "better"}, "better in B"),
    el("option", {value: "unpaired"}, "invalid or unscored in a run"),
    el("option", {value: "new-invalid"}, "newly invalid in B (valid in A)"),
    el("option", {value: "new-valid"}, "newly valid in B (not valid in A)"));
  const dirSel = el("select", {id: "f-dir", "aria-label": "order"},
    el("option", {value: "1"}, "worst in B first"), el("option", {value: "-1"}, "best in B first"));
  const count = el("span", {id: "count", class: "muted"});
  const head = el("div", {class: "head"}, el("div", {}, "key"), el("div", {}, "question"),
    names.map(function (n) { return el("div", {class: "num"}, n + ": A \u2192 B"); }));
  head.style.gridTemplateColumns = cols;
  const viewport = el("div", {class: "viewport", id: "rows"});

  function side(j) {
    if (j === null) return "skipped";
    return j.error ? j.error.kind : fmt(j.value);
  }

  function cell(i, k) {
    const p = pairs[i], g = gain(i, k);
    const va = valid(p.a.scores[k]), vb = valid(p.b.scores[k]);
    /* a score lost in B is a regression of B, one gained an improvement */
    const cls = g === null ? (va && !vb ? " bad" : vb && !va ? " good" : " muted")
      : g > 1e-6 ? " good" : g < -1e-6 ? " bad" : "";
    return el("div", {class: "num" + cls}, side(p.a.scores[k]) + " \u2192 " + side(p.b.scores[k]) +
      (g === null ? "" : "  (" + signed(value(p.b.scores[k]) - value(p.a.scores[k])) + ")"));
  }

  const rows = new RM.VirtualRows(viewport, ROW_H, function (pos) {
    const i = order[pos], p = pairs[i];
    const row = el("div", {class: "row" + (i === selected ? " selected" : ""), "data-key": p.key, role: "button",
      on: {click: function () { select(i, true); }}},
      el("div", {title: p.key}, p.key),
      el("div", {}, RM.preview(V.questionOf(p.b) || V.questionOf(p.a), 200)),
      names.map(function (_, k) { return cell(i, k); }));
    row.style.gridTemplateColumns = cols;
    row.style.lineHeight = ROW_H + "px";
    return row;
  });

  let timer = null;
  search.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(function () { state.text = search.value.trim().toLowerCase(); recompute(); }, 150);
  });
  for (const input of [metricSel, showSel, dirSel]) {
    input.addEventListener("change", function () {
      state.metric = Number(metricSel.value); state.show = showSel.value; state.dir = Number(dirSel.value); recompute();
    });
  }

  /* ---------------------------------------------------------------- side by side */
  const detail = el("section", {id: "detail", class: "panel", hidden: true});

  /* a conversation (its chat; the conversation metrics' blocks) or a sample (a turn with its history) */
  function column(label, runId, s) {
    return el("div", {class: "side", "data-side": label},
      el("h2", {}, label + " \u00b7 " + runId + (s.id ? " \u00b7 " + s.id : "")),
      s.messages ? V.trajectory(s.steps) : null,
      s.messages ? V.chat(s.messages) : V.turnContext(s),
      V.textBlock("answer", s.answer),
      names.map(function (n, k) { return s.messages && !s.scores[k] ? null : V.metricBlock(s, n, s.scores[k]); }),
      s.messages ? null : [el("h3", {}, s.contexts.length + " context(s)"), V.contexts(s, names)]);
  }

  function select(i, fromClick) {
    selected = i;
    const p = pairs[i];
    rows.refresh();
    while (detail.firstChild) detail.removeChild(detail.firstChild);
    detail.hidden = false;
    const sameQ = p.a.question === p.b.question && p.a.reference === p.b.reference;
    RM.add(detail,
      el("h2", {}, "sample " + p.key),
      sameQ ? [V.textBlock("question", p.a.question), V.textBlock("reference", p.a.reference)]
        : el("div", {class: "sides"},
          el("div", {}, V.textBlock("question in A", p.a.question), V.textBlock("reference in A", p.a.reference)),
          el("div", {}, V.textBlock("question in B", p.b.question), V.textBlock("reference in B", p.b.reference))),
      V.legend(),
      el("div", {class: "sides"}, column("A", runs.a.run_id, p.a), column("B", runs.b.run_id, p.b)));
    if (fromClick) detail.scrollIntoView({block: "start"});
  }

  function unmatched(label, items) {
    if (!items.length) return null;
    return el("details", {id: "only-" + label.toLowerCase()},
      el("summary", {class: "warn"}, items.length + " sample(s) only in " + label),
      el("table", {class: "t"}, el("tbody", {}, items.map(function (x) {
        return el("tr", {}, el("td", {class: "mono"}, x.key), el("td", {}, RM.preview(x.question, 300)));
      }))));
  }

  /* ---------------------------------------------------------------- page */
  RM.add(app,
    header(),
    warning(),
    el("h2", {}, "metrics: B \u2212 A over the pairs both runs scored"),
    metricsTable(),
    calibratedNote(),
    el("p", {class: "muted"}, "95% CI: " + C.ci + ". p: " + C.test + ". A pair counts only when both runs scored it " +
      "validly; a sample valid in A and invalid or unscored in B is newly invalid, a regression of B (newly valid: the " +
      "reverse). Verdict at margin " + C.margin + ", at most " + C.max_new_invalid + " newly invalid sample(s)."),
    el("h2", {}, "matched samples"),
    el("div", {class: "controls"}, search, el("span", {class: "muted"}, "by"), metricSel, showSel, dirSel, count),
    el("div", {class: "grid", id: "table"}, head, viewport),
    detail,
    unmatched("A", D.only_a), unmatched("B", D.only_b));
  recompute();
  document.documentElement.setAttribute("data-ready", "1");
})();
