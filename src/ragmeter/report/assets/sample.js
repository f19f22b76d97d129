/* ragmeter pages: one sample's drill-down (window.RM.sampleView), shared by the run report and
   the comparison page: text blocks, a metric's score with its reason or invalid cause and raw
   reply, claims with their evidence highlighted in context, generated questions, per-context
   verdicts, judge calls, and the sample's contexts with every mark. textContent only. */
"use strict";
(function () {
  const {el, fmt} = RM;

  function dl(pairs) {
    const d = el("dl", {class: "meta"});
    for (const [k, v] of pairs) {
      if (v === null || v === undefined || v === "") continue;
      d.appendChild(el("dt", {}, k));
      d.appendChild(el("dd", {}, v));
    }
    return d;
  }

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

  function metricBlock(s, name, j) {
    const box = el("div", {class: "metric-block", "data-metric": name});
    if (j === null || j === undefined) {
      RM.add(box, el("h3", {}, name + ": not scored"));
      RM.add(box, el("div", {class: "muted"}, "the sample lacks a field this metric needs (see the input problems)"));
      return box;
    }
    RM.add(box, el("h3", {}, name + ": ", j.error ? el("span", {class: "bad"}, "invalid (" + j.error.kind + ")") : fmt(j.value)));
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

  /* The sample's contexts, each with its marks ([context, start, end, class, label]) highlighted. */
  function contexts(s) {
    return s.contexts.map(function (c, k) {
      const marks = s.marks.filter(function (m) { return m[0] === k; }).map(function (m) { return [m[1], m[2], m[3], m[4]]; });
      return [el("h3", {}, "context " + (k + 1)), el("div", {class: "text context", "data-context": k}, RM.highlight(c, marks))];
    });
  }

  function legend() {
    return el("div", {class: "muted"}, "highlighted: ", el("mark", {class: "ev-sup"}, "evidence of a supported claim"), " ",
      el("mark", {class: "ev-unsup"}, "evidence of an unsupported claim"), " ", el("mark", {class: "rel"}, "sentence needed for the question"));
  }

  RM.sampleView = {dl: dl, textBlock: textBlock, metricBlock: metricBlock, contexts: contexts, legend: legend};
})();
