/* ragmeter run report: header, metric cards, the sample table (sorted, filtered, rendered lazily)
   and the drill-down of one sample. Reads RM.data() (ragmeter.report.html_data.report_data). */
(function () {
  const {el, fmt} = RM;
  const D = RM.data();
  const run = D.run, metrics = D.metrics, samples = D.samples;
  const app = document.getElementById("app");
  const ROW_H = 28;
  document.title = "ragmeter report " + run.run_id;

  function dl(pairs) {
    const d = el("dl", {class: "meta"});
    for (const [k, v] of pairs) {
      if (v === null || v === undefined || v === "") continue;
      d.appendChild(el("dt", {}, k));
      d.appendChild(el("dd", {}, v));
    }
    return d;
  }

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
        ["samples", RM.int(run.n_samples) + " scored rows, " + RM.int(run.n_skipped) + " input rows skipped"],
        ["usage", RM.int(u.requests) + " requests (" + RM.int(u.cached_requests) + " from cache), " +
          RM.int(u.prompt_tokens) + " prompt + " + RM.int(u.completion_tokens) + " completion tokens"],
        ["cost", run.cost === null || run.cost === undefined ? null : run.cost.toFixed(4)],
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
  function card(m, k) {
    const ci = m.ci95 ? "95% CI [" + fmt(m.ci95[0]) + ", " + fmt(m.ci95[1]) + "]" : "no valid score";
    const kinds = Object.entries(m.invalid_kinds || {}).sort(function (a, b) { return b[1] - a[1]; });
    return el("div", {class: "card", "data-metric": m.name},
      el("div", {class: "name"}, m.name),
      el("div", {class: "mean"}, fmt(m.mean)),
      el("div", {class: "ci"}, ci),
      el("div", {}, "scored " + m.n_scored + " \u00b7 invalid ",
        el("span", {class: m.n_invalid ? "bad" : ""}, String(m.n_invalid)), " \u00b7 skipped " + m.n_skipped),
      m.threshold === null || m.threshold === undefined ? null :
        el("div", {}, "pass rate " + RM.pct(m.pass_rate) + " (\u2265 " + m.threshold + ")"),
      m.judge_spread === null || m.judge_spread === undefined ? null :
        el("div", {class: "muted"}, "judge spread (mean per-sample SD) " + fmt(m.judge_spread)),
      RM.histogram(m.histogram),
      kinds.length ? el("ul", {}, kinds.map(function (e) {
        return el("li", {}, el("button", {class: "kind", type: "button", title: "show these samples", on: {click: function () {
          setInvalidFilter(k + ":" + e[0]);
        }}}, e[0]), ": " + e[1]);
      })) : null,
      el("div", {class: "muted"}, RM.int(m.usage.requests) + " requests, " +
        RM.int(m.usage.prompt_tokens + m.usage.completion_tokens) + " tokens"));
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

  function searchText(i) {
    if (haystack === null) haystack = new Array(samples.length);
    if (haystack[i] === undefined) {
      const s = samples[i];
      const parts = [s.id, s.question, s.answer, s.reference].concat(s.contexts);
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
  const cols = "64px minmax(80px, 160px) minmax(200px, 1fr)" + metrics.map(function () { return " 130px"; }).join("");
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
    .concat(metrics.map(function (m, k) { return ["m" + k, m.name]; }))
    .map(function (c) {
      return el("div", {"data-key": c[0], title: "sort by " + c[1], class: c[0][0] === "m" ? "num" : "",
        on: {click: function () {
          if (state.sortKey === c[0]) state.sortDir = -state.sortDir;
          else { state.sortKey = c[0]; state.sortDir = 1; }
          recompute();
        }}}, c[1]);
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
      el("div", {}, RM.preview(s.question, 200)),
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

  function textBlock(label, text, cls) {
    if (text === null || text === undefined) return null;
    return [el("h3", {}, label), el("div", {class: "text" + (cls ? " " + cls : "")}, String(text))];
  }

  function snippet(s, at, cls) {
    const ctx = s.contexts[at[0]] || "";
    const a = Math.max(0, at[1] - 160), b = Math.min(ctx.length, at[2] + 160);
    return el("div", {class: "text evidence-snippet"},
      el("span", {class: "muted"}, "context " + (at[0] + 1) + ": " + (a > 0 ? "\u2026" : "")),
      RM.highlight(ctx.slice(a, b), [[at[1] - a, at[2] - a, cls + " evidence", "evidence"]]),
      b < ctx.length ? "\u2026" : "");
  }

  function verdictBadge(ok, conf) {
    return el("span", {class: "badge " + (ok ? "good" : "bad")},
      (ok ? "supported" : "not supported") + (conf === null || conf === undefined || conf === 1 || conf === 0 ? "" : " (" + fmt(conf, 2) + ")"));
  }

  function claimsTable(s, claims) {
    return el("table", {class: "t claims"},
      el("thead", {}, el("tr", {}, ["#", "claim", "verdict", "reason", "evidence"].map(function (h) { return el("th", {}, h); }))),
      el("tbody", {}, claims.map(function (c, n) {
        if (typeof c !== "object" || c === null) return el("tr", {}, el("td", {}, String(n + 1)), el("td", {colspan: 4}, String(c)));
        const ev = c.evidence ? (c.evidence_at ? snippet(s, c.evidence_at, c.supported ? "ev-sup" : "ev-unsup")
          : el("div", {}, el("span", {class: "muted"}, "quoted, not found verbatim in the contexts: "), c.evidence))
          : el("span", {class: "muted"}, "no evidence given");
        return el("tr", {class: "claim"}, el("td", {}, String(n + 1)), el("td", {}, c.claim),
          el("td", {}, verdictBadge(c.supported, c.confidence)), el("td", {}, c.reason || ""), el("td", {}, ev));
      })));
  }

  function questionsTable(qs) {
    return el("table", {class: "t questions"},
      el("thead", {}, el("tr", {}, el("th", {}, "question generated from the answer"), el("th", {class: "num"}, "similarity"))),
      el("tbody", {}, qs.map(function (q) {
        return typeof q === "object" && q !== null ? el("tr", {}, el("td", {}, q.question), el("td", {class: "num"}, fmt(q.similarity)))
          : el("tr", {}, el("td", {}, String(q)), el("td", {}, ""));
      })));
  }

  function perContextTable(s, rowsIn) {
    return el("table", {class: "t contexts"},
      el("thead", {}, el("tr", {}, ["rank", "context", "useful", "reason"].map(function (h) { return el("th", {}, h); }))),
      el("tbody", {}, rowsIn.map(function (c) {
        return el("tr", {}, el("td", {}, String(c.rank)),
          el("td", {}, c.evidence_at ? snippet(s, c.evidence_at, c.useful ? "ev-sup" : "ev-unsup") : RM.preview(c.context, 160)),
          el("td", {}, el("span", {class: "badge " + (c.useful ? "good" : "bad")}, c.useful ? "useful" : "not useful")),
          el("td", {}, c.reason || ""));
      })));
  }

  function sentenceTable(groups) {
    return el("table", {class: "t sentences"},
      el("thead", {}, el("tr", {}, el("th", {}, "context"), el("th", {}, "sentence"), el("th", {class: "num"}, "needed"))),
      el("tbody", {}, groups.map(function (g, k) {
        return g.map(function (x) {
          return el("tr", {}, el("td", {}, String(k + 1)), el("td", {}, x.sentence),
            el("td", {class: "num " + (x.rating >= 0.5 ? "good" : "muted")}, fmt(x.rating, 2)));
        });
      })));
  }

  const SHOWN = {claims: 1, questions: 1, contexts: 1};

  function otherDetails(d) {
    const pairs = Object.entries(d).filter(function (e) { return !SHOWN[e[0]] || !Array.isArray(e[1]); });
    if (!pairs.length) return null;
    return el("details", {}, el("summary", {class: "muted"}, "other details"),
      el("pre", {class: "text"}, JSON.stringify(Object.fromEntries(pairs), null, 2)));
  }

  function callsTable(j) {
    if (!j.calls.length) return null;
    return el("details", {class: "calls"}, el("summary", {class: "muted"}, j.calls.length + " judge call(s)"),
      el("table", {class: "t"},
        el("thead", {}, el("tr", {}, ["step", "model", "latency", "tokens", "cached", "attempts", "error"].map(function (h) { return el("th", {}, h); }))),
        el("tbody", {}, j.calls.map(function (c) {
          const u = c.usage || {};
          return [el("tr", {}, el("td", {}, c.step || ""), el("td", {}, c.model || ""),
            el("td", {class: "num"}, c.latency_s === null || c.latency_s === undefined ? "" : fmt(c.latency_s, 2) + " s"),
            el("td", {class: "num"}, (u.prompt_tokens || 0) + " + " + (u.completion_tokens || 0)),
            el("td", {}, c.cached ? "yes" : ""), el("td", {class: "num"}, c.attempts === undefined ? "" : String(c.attempts)),
            el("td", {class: "bad"}, c.error ? String(c.error) : "")),
            c.reply ? el("tr", {}, el("td", {colspan: 7}, el("pre", {class: "raw"}, String(c.reply)))) : null];
        }))));
  }

  function metricBlock(s, k) {
    const m = metrics[k], j = s.scores[k];
    const box = el("div", {class: "metric-block", "data-metric": m.name});
    if (j === null) {
      RM.add(box, el("h3", {}, m.name + ": not scored"));
      RM.add(box, el("div", {class: "muted"}, "the sample lacks a field this metric needs (see the input problems)"));
      return box;
    }
    RM.add(box, el("h3", {}, m.name + ": ", j.error ? el("span", {class: "bad"}, "invalid (" + j.error.kind + ")") : fmt(j.value)));
    if (j.error) {
      RM.add(box, el("div", {class: "error"}, j.error.message));
      if (j.error.raw !== null && j.error.raw !== undefined) {
        RM.add(box, el("div", {class: "muted"}, "the judge's raw reply:"));
        RM.add(box, el("pre", {class: "raw"}, String(j.error.raw)));
      }
    } else if (j.reason) {
      RM.add(box, el("div", {class: "reason"}, j.reason));
    }
    const d = j.details || {};
    if (Array.isArray(d.claims) && d.claims.length) RM.add(box, claimsTable(s, d.claims));
    if (Array.isArray(d.questions) && d.questions.length) RM.add(box, questionsTable(d.questions));
    if (Array.isArray(d.contexts) && d.contexts.length) {
      RM.add(box, Array.isArray(d.contexts[0]) ? sentenceTable(d.contexts) : perContextTable(s, d.contexts));
    }
    RM.add(box, otherDetails(d));
    const u = j.usage || {};
    RM.add(box, el("div", {class: "muted usage"}, (u.requests || 0) + " request(s), " + (u.prompt_tokens || 0) +
      " prompt + " + (u.completion_tokens || 0) + " completion tokens" + (u.cached_requests ? ", " + u.cached_requests + " from cache" : "") +
      ", " + fmt(j.duration_s, 2) + " s"));
    RM.add(box, callsTable(j));
    return box;
  }

  function select(i, fromClick) {
    selected = i;
    const s = samples[i];
    rows.refresh();
    while (detail.firstChild) detail.removeChild(detail.firstChild);
    detail.hidden = false;
    const meta = Object.keys(s.metadata || {}).length ? el("details", {}, el("summary", {class: "muted"}, "metadata"),
      el("pre", {class: "text"}, JSON.stringify(s.metadata, null, 2))) : null;
    const ctxs = s.contexts.map(function (c, k) {
      const marks = s.marks.filter(function (m) { return m[0] === k; }).map(function (m) { return [m[1], m[2], m[3], m[4]]; });
      return [el("h3", {}, "context " + (k + 1)), el("div", {class: "text context", "data-context": k}, RM.highlight(c, marks))];
    });
    RM.add(detail,
      el("h2", {}, "sample " + s.idx + (s.id ? " \u00b7 " + s.id : "")),
      textBlock("question", s.question), textBlock("answer", s.answer), textBlock("reference", s.reference), meta,
      el("h3", {}, "scores"),
      metrics.map(function (_, k) { return metricBlock(s, k); }),
      el("h2", {}, s.contexts.length + " context(s)"),
      el("div", {class: "muted"}, "highlighted: ", el("mark", {class: "ev-sup"}, "evidence of a supported claim"), " ",
        el("mark", {class: "ev-unsup"}, "evidence of an unsupported claim"), " ", el("mark", {class: "rel"}, "sentence needed for the question")),
      ctxs);
    try { history.replaceState(null, "", "#sample-" + s.idx); } catch (e) { /* some file:// settings forbid it */ }
    if (fromClick) detail.scrollIntoView({block: "start"});
  }

  /* ---------------------------------------------------------------- page */
  RM.add(app,
    header(),
    el("h2", {}, "metrics"),
    el("div", {class: "cards", id: "cards"}, metrics.map(card)),
    el("h2", {}, "samples"),
    el("div", {class: "controls"}, search, el("span", {class: "muted"}, "range of"), metricSel, minIn, maxIn, invalidSel, count),
    el("div", {class: "grid", id: "table"}, head, viewport),
    detail);
  recompute();
  const m = /^#sample-(\d+)$/.exec(location.hash);
  if (m) {
    const i = samples.findIndex(function (s) { return s.idx === Number(m[1]); });
    if (i >= 0) { select(i, false); rows.scrollTo(order.indexOf(i)); }
  }
  document.documentElement.setAttribute("data-ready", "1");
})();
