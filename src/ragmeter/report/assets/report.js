/* ragmeter run report: header, metric cards, the sample table (sorted, filtered, rendered lazily)
   and the drill-down of one sample. Reads RM.data() (ragmeter.report.html_data.report_data). */
(function () {
  const {el, fmt} = RM;
  const {dl, textBlock, metricBlock} = RM.sampleView;
  const D = RM.data();
  const run = D.run, metrics = D.metrics, samples = D.samples;
  const app = document.getElementById("app");
  const ROW_H = 28;
  /* samples read from OpenTelemetry traces carry metadata.trace: latency and the app's tokens */
  const T = run.traces || null;
  function trace(s) { return (s.metadata && s.metadata.trace) || null; }
  function ms(x) { return x === null || x === undefined ? "" : x < 1000 ? Math.round(x) + " ms" : (x / 1000).toFixed(2) + " s"; }
  function traceLine(t) {
    if (!t) return null;
    const tok = t.total_tokens === undefined ? "no token counts" :
      RM.int(t.total_tokens) + " tokens (" + RM.int(t.prompt_tokens || 0) + " prompt + " + RM.int(t.completion_tokens || 0) + " completion)";
    return ["trace " + t.trace_id, "latency " + ms(t.latency_ms), tok, RM.int(t.llm_calls || 0) + " LLM call(s)",
      t.model, t.service, t.error ? "error: " + t.error : null].filter(Boolean).join(" \u00b7 ");
  }
  document.title = "ragmeter report " + run.run_id;

  function obj(o) {
    return Object.entries(o || {}).filter(function (e) { return e[1] !== null && e[1] !== undefined; })
      .map(function (e) { return e[0] + " " + (typeof e[1] === "object" ? JSON.stringify(e[1]) : e[1]); })
      .join(", ");
  }

  /* ---------------------------------------------------------------- header */
  function header() {
    const u = run.usage || {};
    const judge = run.judge || {};
    const box = el("section", {id: "header"},
      el("h1", {}, "ragmeter report"),
      dl([
        ["run", run.run_id + (run.status === "finished" ? "" : "  (status: " + run.status + ")")],
        ["data", (run.source || "<data>") + (run.dataset_hash ? "  \u00b7 hash " + String(run.dataset_hash).slice(0, 12) : "")],
        ["judge", [judge.name, judge.model].filter(Boolean).join(" \u00b7 ") || "?"],
        ["metrics", metrics.map(function (m) { return m.name; }).join(", ")],
        ["created", run.created_at],
        ["report written", D.generated_at],
        ["versions", obj(run.versions)],
        ["prompt versions", obj(run.prompt_versions)],
        ["samples", RM.int(run.n_samples) + " scored rows" + (run.n_conversations ? " (" + RM.int(run.n_conversations) +
          " conversations and their turns)" : "") + ", " + RM.int(run.n_skipped) + " input rows skipped"],
        /* a run that sent no request (the local judge) has no usage to show */
        ["usage", !u.requests && !u.cached_requests && !u.prompt_tokens ? null :
          RM.int(u.requests) + " requests (" + RM.int(u.cached_requests) + " from cache), " +
          RM.int(u.prompt_tokens) + " prompt + " + RM.int(u.completion_tokens) + " completion tokens"],
        ["cost", run.cost === null || run.cost === undefined ? null : run.cost.toFixed(4)],
        ["traces", T === null ? null : RM.int(T.n) + " samples from traces" +
          (T.latency_ms ? "; latency median " + ms(T.latency_ms.median) + ", p95 " + ms(T.latency_ms.p95) + ", max " + ms(T.latency_ms.max) : "") +
          (T.n_with_tokens ? "; the app's tokens " + RM.int(T.prompt_tokens) + " prompt + " + RM.int(T.completion_tokens) +
            " completion in " + RM.int(T.llm_calls) + " LLM call(s)" : "; no token counts in the traces")],
        ["store", run.store],
      ]));
    if (D.skipped.length) {
      const body = el("tbody");
      const det = el("details", {id: "skipped"},
        el("summary", {class: "warn"}, D.skipped.length + " input problem(s): rows skipped or fields missing"),
        el("table", {class: "t"}, el("thead", {}, el("tr", {}, ["file", "row", "field", "reason"].map(function (h) {
          return el("th", {}, h);
        }))), body));
      let filled = false;
      det.addEventListener("toggle", function () {
        if (filled || !det.open) return;
        filled = true;
        for (const p of D.skipped) {
          body.appendChild(el("tr", {}, el("td", {}, p.file || ""), el("td", {}, p.row === null ? "" : String(p.row)),
            el("td", {}, p.field || ""), el("td", {}, p.message)));
        }
      });
      RM.add(box, det);
    }
    return box;
  }

  /* ---------------------------------------------------------------- metric cards */
  const JUDGE_CI_NOTE = "The 95% CI of a mean is the judge's: how far it could move on other samples like these, " +
    "not how far the judge is from what people would say. Label samples of the run's draw for a calibrated estimate.";

  function calibratedBlock(c) {
    if (!c) return null;
    if (c.mean === null || c.mean === undefined) {
      return el("div", {class: "calibrated muted"}, c.n_labels + " random label(s); " + c.needed + " more for a calibrated estimate");
    }
    return el("div", {class: "calibrated"},
      el("div", {}, "calibrated to people's labels: ", el("b", {}, fmt(c.mean)), " [" + fmt(c.ci95[0]) + ", " + fmt(c.ci95[1]) + "]"),
      el("div", {class: "muted"}, c.n_labels + " random labels, PPI++ (\u03bb " + fmt(c.lambda, 2) + "); labels alone [" +
        fmt(c.labels_only_ci95[0]) + ", " + fmt(c.labels_only_ci95[1]) + "]"),
      c.warning ? el("div", {class: "warn"}, c.warning) : null);
  }

  function card(m, k) {
    const ci = m.ci95 ? "95% CI [" + fmt(m.ci95[0]) + ", " + fmt(m.ci95[1]) + "]" : "no valid score";
    const kinds = Object.entries(m.invalid_kinds || {}).sort(function (a, b) { return b[1] - a[1]; });
    return el("div", {class: "card", "data-metric": m.name},
      el("div", {class: "name"}, m.name),
      el("div", {class: "mean"}, fmt(m.mean)),
      el("div", {class: "ci"}, ci),
      calibratedBlock(m.calibrated),
      el("div", {}, "scored " + m.n_scored + " \u00b7 invalid ",
        el("span", {class: m.n_invalid ? "bad" : ""}, String(m.n_invalid)), " \u00b7 skipped " + m.n_skipped),
      m.threshold === null || m.threshold === undefined ? null :
        el("div", {}, "pass rate " + RM.pct(m.pass_rate) + " (" + (m.higher_is_better === false ? "\u2264 " : "\u2265 ") + m.threshold + ")"),
      m.judge_spread === null || m.judge_spread === undefined ? null :
        el("div", {class: "muted"}, "judge spread (mean per-sample SD) " + fmt(m.judge_spread)),
      RM.histogram(m.histogram),
      kinds.length ? el("ul", {}, kinds.map(function (e) {
        return el("li", {}, el("button", {class: "kind", type: "button", title: "show these samples", on: {click: function () {
          setInvalidFilter(k + ":" + e[0]);
        }}}, e[0]), ": " + e[1]);
      })) : null,
      m.usage.requests || m.usage.cached_requests ? el("div", {class: "muted"}, RM.int(m.usage.requests) + " requests, " +
        RM.int(m.usage.prompt_tokens + m.usage.completion_tokens) + " tokens") : null,
      D.label_page ? el("div", {class: "label-link"}, RM.link(D.label_page + "?metric=" + encodeURIComponent(m.name),
        "label samples for " + m.name)) : null);
  }

  /* ---------------------------------------------------------------- agreement with the run's labels */
  const POINT_STATS = {binary: ["accuracy", "kappa", "tpr", "tnr", "balanced_accuracy", "auc"],
    graded: ["spearman", "kendall", "auc"]};
  const SHOWN_DISAGREEMENTS = 20;

  function ciText(v) { return v ? "[" + fmt(v[0]) + ", " + fmt(v[1]) + "]" : "\u2014"; }

  function agreementBlock(a) {
    const labels = a.labels || {};
    const pos = a.kind === "binary" ? "label 1" : "label \u2265 0.5", neg = a.kind === "binary" ? "label 0" : "label < 0.5";
    const c = a.confusion || {};
    const worst = a.disagreements || [];
    return el("div", {class: "panel agreement", "data-metric": a.metric},
      el("h3", {}, a.metric + " (" + a.kind + " labels)"),
      el("div", {}, "n " + a.n + " \u00b7 " + a.n_invalid + " without a valid score \u00b7 base rate " + fmt(a.base_rate) +
        " \u00b7 labels: " + (labels.random || 0) + " random, " + (labels.picked || 0) + " picked"),
      labels.picked ? el("div", {class: "warn picked-note"}, "Picked labels count here: samples chosen by hand are no " +
        "random sample, so these figures may not hold for the run as a whole.") : null,
      el("table", {class: "t stats"}, el("thead", {}, el("tr", {}, ["statistic", "value", "95% CI"].map(function (h) {
        return el("th", {}, h);
      }))), el("tbody", {}, POINT_STATS[a.kind].map(function (k) {
        return el("tr", {}, el("td", {}, k), el("td", {class: "num"}, fmt(a[k])), el("td", {}, ciText((a.ci95 || {})[k])));
      }))),
      el("table", {class: "t confusion"},
        el("caption", {class: "muted"}, "at threshold " + a.threshold),
        el("thead", {}, el("tr", {}, el("th", {}, ""), el("th", {}, pos), el("th", {}, neg))),
        el("tbody", {},
          el("tr", {}, el("th", {}, "judge passes"), el("td", {}, String(c.tp || 0)), el("td", {}, String(c.fp || 0))),
          el("tr", {}, el("th", {}, "judge fails"), el("td", {}, String(c.fn || 0)), el("td", {}, String(c.tn || 0))))),
      worst.length ? el("details", {class: "disagreements"},
        el("summary", {}, worst.length + " disagreement(s), worst first"),
        el("table", {class: "t"}, el("thead", {}, el("tr", {}, ["sample", "score", "label", "drawn"].map(function (h) {
          return el("th", {}, h);
        }))), el("tbody", {}, worst.slice(0, SHOWN_DISAGREEMENTS).map(function (d) {
          return el("tr", {}, el("td", {}, el("button", {class: "kind", type: "button", "data-idx": d.idx, title: "show this sample",
            on: {click: function () { showSample(d.idx); }}}, String(d.id))),
            el("td", {class: "num"}, fmt(d.score)), el("td", {class: "num"}, fmt(d.label)), el("td", {}, d.drawn || ""));
        }))),
        worst.length > SHOWN_DISAGREEMENTS ? el("div", {class: "muted"}, "and " + (worst.length - SHOWN_DISAGREEMENTS) +
          " more (ragmeter agreement RUN --json lists every one)") : null) : null);
  }

  function agreementSection() {
    const items = D.agreement || [];
    if (!items.length) return null;
    return el("section", {id: "agreement"},
      el("h2", {}, "agreement with your labels"),
      el("p", {class: "muted"}, "The judge's stored scores against the labels people gave this run's samples " +
        "(ragmeter agreement RUN): the judge's verdict is a score at or above the metric's threshold."),
      items.map(agreementBlock));
  }

  function showSample(idx) {
    const i = samples.findIndex(function (s) { return s.idx === idx; });
    if (i < 0) return;
    const pos = order.indexOf(i);
    select(i, true);
    if (pos >= 0) rows.scrollTo(pos);
  }

  /* ---------------------------------------------------------------- table state */
  const state = {sortKey: metrics.length ? "m0" : "idx", sortDir: 1, text: "", metric: 0, min: null, max: null, invalid: ""};
  if (metrics.length && !metrics[0].higher_is_better) state.sortDir = -1;
  let order = samples.map(function (_, i) { return i; });
  let selected = -1;
  let haystack = null;

  function job(s, k) { return s.scores[k]; }

  /* rank: valid values first (in the chosen direction), then invalid scores, then skipped */
  function cmpMetric(k, dir) {
    return function (a, b) {
      const ja = job(samples[a], k), jb = job(samples[b], k);
      const ra = ja === null ? 2 : ja.error ? 1 : 0, rb = jb === null ? 2 : jb.error ? 1 : 0;
      if (ra !== rb) return ra - rb;
      if (ra === 0 && ja.value !== jb.value) return dir * (ja.value - jb.value);
      if (ra === 1 && ja.error.kind !== jb.error.kind) return ja.error.kind < jb.error.kind ? -1 : 1;
      return samples[a].idx - samples[b].idx;
    };
  }

  function cmpField(f, dir) {
    return function (a, b) {
      const x = samples[a][f], y = samples[b][f];
      const sx = x === null || x === undefined ? "" : String(x), sy = y === null || y === undefined ? "" : String(y);
      if (f === "idx") return dir * (x - y);
      return sx === sy ? samples[a].idx - samples[b].idx : dir * (sx < sy ? -1 : 1);
    };
  }

  /* latency / tokens of trace samples: samples without them last */
  function cmpTrace(key, dir) {
    return function (a, b) {
      const ta = trace(samples[a]), tb = trace(samples[b]);
      const x = ta ? ta[key] : undefined, y = tb ? tb[key] : undefined;
      const ra = typeof x === "number" ? 0 : 1, rb = typeof y === "number" ? 0 : 1;
      if (ra !== rb) return ra - rb;
      if (ra === 0 && x !== y) return dir * (x - y);
      return samples[a].idx - samples[b].idx;
    };
  }

  function searchText(i) {
    if (haystack === null) haystack = new Array(samples.length);
    if (haystack[i] === undefined) {
      const s = samples[i];
      const parts = [s.id, s.question, s.answer, s.reference, s.standalone_question].concat(s.contexts)
        .concat((s.messages || []).map(function (m) { return m.content; }));
      for (const j of s.scores) if (j) parts.push(j.reason);
      haystack[i] = parts.filter(function (p) { return p; }).join("\n").toLowerCase();
    }
    return haystack[i];
  }

  function keep(i) {
    const s = samples[i];
    if (state.min !== null || state.max !== null) {
      const j = job(s, state.metric);
      if (!j || j.error) return false;
      if (state.min !== null && j.value < state.min) return false;
      if (state.max !== null && j.value > state.max) return false;
    }
    if (state.invalid === "any") {
      if (!s.scores.some(function (j) { return j && j.error; })) return false;
    } else if (state.invalid === "none") {
      if (s.scores.some(function (j) { return j && j.error; })) return false;
    } else if (state.invalid) {
      const cut = state.invalid.indexOf(":");
      const j = job(s, Number(state.invalid.slice(0, cut)));
      if (!j || !j.error || j.error.kind !== state.invalid.slice(cut + 1)) return false;
    }
    if (state.text && searchText(i).indexOf(state.text) < 0) return false;
    return true;
  }

  function recompute() {
    order = [];
    for (let i = 0; i < samples.length; i++) if (keep(i)) order.push(i);
    const cmp = state.sortKey[0] === "m" ? cmpMetric(Number(state.sortKey.slice(1)), state.sortDir)
      : state.sortKey === "latency_ms" || state.sortKey === "total_tokens" ? cmpTrace(state.sortKey, state.sortDir)
      : cmpField(state.sortKey, state.sortDir);
    order.sort(cmp);
    count.textContent = order.length === samples.length ? samples.length + " samples"
      : order.length + " of " + samples.length + " samples";
    for (const h of headCells) {
      h.classList.toggle("sorted-asc", h.dataset.key === state.sortKey && state.sortDir > 0);
      h.classList.toggle("sorted-desc", h.dataset.key === state.sortKey && state.sortDir < 0);
    }
    rows.setCount(order.length);
  }

  /* ---------------------------------------------------------------- table */
  const cols = "64px minmax(80px, 160px) minmax(200px, 1fr)" + (T ? " 90px 90px" : "") +
    metrics.map(function () { return " 130px"; }).join("");
  const search = el("input", {type: "search", id: "q", placeholder: "search question, answer, contexts, reasons\u2026",
    "aria-label": "search"});
  const metricSel = el("select", {id: "f-metric", "aria-label": "metric for the range"},
    metrics.map(function (m, k) { return el("option", {value: k}, m.name); }));
  const minIn = el("input", {type: "number", id: "f-min", step: "any", placeholder: "min", "aria-label": "minimum"});
  const maxIn = el("input", {type: "number", id: "f-max", step: "any", placeholder: "max", "aria-label": "maximum"});
  const invalidSel = el("select", {id: "f-invalid", "aria-label": "invalid scores"},
    el("option", {value: ""}, "all scores"),
    el("option", {value: "any"}, "any invalid score"),
    el("option", {value: "none"}, "no invalid score"),
    metrics.map(function (m, k) {
      return Object.keys(m.invalid_kinds || {}).sort().map(function (kind) {
        return el("option", {value: k + ":" + kind}, m.name + " invalid: " + kind + " (" + m.invalid_kinds[kind] + ")");
      });
    }));
  const count = el("span", {id: "count", class: "muted"});
  const headCells = [["idx", "#"], ["id", "id"], ["question", "question"]]
    .concat(T ? [["latency_ms", "latency"], ["total_tokens", "tokens"]] : [])
    .concat(metrics.map(function (m, k) { return ["m" + k, m.name]; }))
    .map(function (c) {
      return el("div", {"data-key": c[0], title: "sort by " + c[1], class: c[0][0] === "m" || c[0] === "latency_ms" || c[0] === "total_tokens" ? "num" : "",
        on: {click: function () {
          if (state.sortKey === c[0]) state.sortDir = -state.sortDir;
          else { state.sortKey = c[0]; state.sortDir = 1; }
          recompute();
        }}}, c[1].replace(/_/g, "_\u200b"));  /* a break after each underscore: names wrap, not cut */
    });
  const head = el("div", {class: "head"}, headCells);
  head.style.gridTemplateColumns = cols;
  const viewport = el("div", {class: "viewport", id: "rows"});

  function cell(s, k) {
    const j = s.scores[k], m = metrics[k];
    if (j === null) return el("div", {class: "num muted", title: "not scored: a field it needs is missing"}, "skipped");
    if (j.error) return el("div", {class: "num bad", title: j.error.message}, j.error.kind);
    const pass = m.threshold === null || m.threshold === undefined ? "" : j.value >= m.threshold ? " good" : " bad";
    return el("div", {class: "num" + pass}, fmt(j.value));
  }

  const rows = new RM.VirtualRows(viewport, ROW_H, function (pos) {
    const i = order[pos], s = samples[i];
    const row = el("div", {class: "row" + (i === selected ? " selected" : ""), "data-idx": s.idx, role: "button",
      on: {click: function () { select(i, true); }}},
      el("div", {class: "num"}, String(s.idx)),
      el("div", {title: s.id || ""}, s.id || ""),
      el("div", {}, RM.preview(RM.sampleView.questionOf(s), 200)),
      T ? [el("div", {class: "num"}, ms((trace(s) || {}).latency_ms)),
        el("div", {class: "num"}, (trace(s) || {}).total_tokens === undefined ? "" : RM.int(trace(s).total_tokens))] : null,
      metrics.map(function (_, k) { return cell(s, k); }));
    row.style.gridTemplateColumns = cols;
    row.style.lineHeight = ROW_H + "px";
    return row;
  });

  function num(input) {
    const v = input.value.trim();
    return v === "" || isNaN(Number(v)) ? null : Number(v);
  }
  let timer = null;
  search.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(function () { state.text = search.value.trim().toLowerCase(); recompute(); }, 150);
  });
  for (const input of [metricSel, minIn, maxIn]) {
    input.addEventListener("input", function () {
      state.metric = Number(metricSel.value); state.min = num(minIn); state.max = num(maxIn); recompute();
    });
  }
  invalidSel.addEventListener("change", function () { state.invalid = invalidSel.value; recompute(); });

  function setInvalidFilter(value) {
    invalidSel.value = value;
    state.invalid = value;
    recompute();
    viewport.scrollIntoView({block: "nearest"});
  }

  /* ---------------------------------------------------------------- drill-down */
  const detail = el("section", {id: "detail", class: "panel", hidden: true});

  /* the metrics that score samples of s's level: the conversation metrics for a conversation */
  function levelMetrics(s) {
    const level = s.messages ? "conversation" : "sample";
    return metrics.map(function (_, k) { return k; }).filter(function (k) { return (metrics[k].level || "sample") === level; });
  }

  /* a turn's scores shown in its conversation's chat, after the answer they score */
  function turnBlock(t) {
    const i = samples.indexOf(t);
    return el("div", {class: "turn-block", "data-turn": t.turn},
      el("div", {class: "turn-head"}, el("strong", {}, "turn " + t.turn), " ",
        el("button", {type: "button", class: "open-turn", on: {click: function () { select(i, true); }}}, "open turn " + t.id)),
      t.standalone_question ? el("div", {class: "standalone"}, el("span", {class: "muted"}, "scored as: "),
        el("span", {class: "standalone-text"}, t.standalone_question)) : null,
      levelMetrics(t).map(function (k) { return metricBlock(t, metrics[k].name, t.scores[k]); }));
  }

  function conversationView(s) {
    const turns = {};
    samples.forEach(function (t) {
      if (t.conversation_id === s.conversation_id && t.turn !== null && t.turn !== undefined && !t.messages) turns[t.turn] = t;
    });
    return RM.sampleView.chat(s.messages, function (turn) { return turns[turn] ? turnBlock(turns[turn]) : null; });
  }

  function select(i, fromClick) {
    selected = i;
    const s = samples[i];
    rows.refresh();
    while (detail.firstChild) detail.removeChild(detail.firstChild);
    detail.hidden = false;
    const meta = Object.keys(s.metadata || {}).length ? el("details", {}, el("summary", {class: "muted"}, "metadata"),
      el("pre", {class: "text"}, JSON.stringify(s.metadata, null, 2))) : null;
    const names = metrics.map(function (m) { return m.name; });
    const shown = levelMetrics(s).map(function (k) { return metricBlock(s, metrics[k].name, s.scores[k]); });
    if (s.messages) {
      RM.add(detail,
        el("h2", {}, "conversation " + (s.id || s.idx)),
        textBlock("reference (the outcome expected)", s.reference), meta,
        shown.length ? [el("h3", {}, "conversation scores"), shown] : null,
        RM.sampleView.trajectory(s.steps),
        el("h2", {}, "the conversation (" + s.messages.length + " messages)"),
        conversationView(s));
    } else {
      const conv = s.conversation_id === undefined || s.conversation_id === null ? -1
        : samples.findIndex(function (c) { return c.messages && c.conversation_id === s.conversation_id; });
      RM.add(detail,
        el("h2", {}, "sample " + s.idx + (s.id ? " \u00b7 " + s.id : "")),
        trace(s) ? el("div", {class: "muted", id: "trace-line"}, traceLine(trace(s))) : null,
        conv >= 0 ? el("button", {type: "button", class: "open-conversation", on: {click: function () { select(conv, true); }}},
          "show the whole conversation") : null,
        RM.sampleView.turnContext(s),
        textBlock("question", s.question), textBlock("answer", s.answer), textBlock("reference", s.reference), meta,
        el("h3", {}, "scores"),
        shown,
        el("h2", {}, s.contexts.length + " context(s)"),
        RM.sampleView.legend(),
        RM.sampleView.contexts(s, names));
    }
    try { history.replaceState(null, "", "#sample-" + s.idx); } catch (e) { /* some file:// settings forbid it */ }
    if (fromClick) detail.scrollIntoView({block: "start"});
  }

  /* ---------------------------------------------------------------- page */
  RM.add(app,
    header(),
    el("h2", {}, "metrics"),
    el("p", {class: "muted", id: "judge-ci-note"}, JUDGE_CI_NOTE),
    el("div", {class: "cards", id: "cards"}, metrics.map(card)),
    agreementSection(),
    el("h2", {}, "samples"),
    el("div", {class: "controls"}, search, el("span", {class: "muted"}, "range of"), metricSel, minIn, maxIn, invalidSel, count,
      el("span", {class: "muted"}, "\u00b7 click a row; j / k: next / previous")),
    el("div", {class: "grid", id: "table"}, head, viewport),
    detail);
  recompute();

  /* j / k: the next / previous sample of the table, as sorted and filtered */
  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey || (e.key !== "j" && e.key !== "k")) return;
    if (e.target && /^(INPUT|SELECT|TEXTAREA|BUTTON)$/.test(e.target.tagName)) return;
    if (!order.length) return;
    const pos = order.indexOf(selected);
    const next = e.key === "j" ? Math.min(order.length - 1, pos + 1) : Math.max(0, pos < 0 ? 0 : pos - 1);
    select(order[next], false);
    rows.scrollTo(next);
  });

  const m = /^#sample-(\d+)$/.exec(location.hash);
  if (m) {
    const i = samples.findIndex(function (s) { return s.idx === Number(m[1]); });
    if (i >= 0) { select(i, false); rows.scrollTo(order.indexOf(i)); }
  }
  document.documentElement.setAttribute("data-ready", "1");
})();
