/* ragmeter pages: one sample's drill-down (window.RM.sampleView), shared by the run report and
   the comparison page: text blocks, a metric's score with its reason or invalid cause and raw
   reply, claims with their evidence highlighted in context, generated questions, per-context
   verdicts and sentence ratings, judge calls, and the sample's contexts with every mark; a
   conversation as a chat, and a turn's history and standalone question.
   textContent only. A sample is one item of html_data.sample_data(). */
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
        const ev = c.evidence_at ? snippet(s, c.evidence_at, c.supported ? "ev-sup" : "ev-unsup")
          : c.evidence ? el("div", {}, el("span", {class: "muted"}, "quoted, not found verbatim in the contexts: "), c.evidence)
          : el("span", {class: "muted"}, "no evidence given");
        /* a hedged claim ("I think ...", "probably", "我不确定，但") was verified without its hedge */
        const claim = c.hedged ? el("td", {}, c.claim, " ", el("span", {class: "badge warn hedged", title: "as written: " + (c.as_written || "")}, "hedged"))
          : el("td", {}, c.claim);
        return el("tr", {class: "claim" + (c.hedged ? " hedged" : "")}, el("td", {}, String(n + 1)), claim,
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
          el("td", {}, c.evidence_at ? snippet(s, c.evidence_at, c.useful ? "ev-sup" : "ev-unsup")
            : RM.preview(c.context_index === undefined ? c.context : s.contexts[c.context_index], 160)),
          el("td", {}, el("span", {class: "badge " + (c.useful ? "good" : "bad")}, c.useful ? "useful" : "not useful")),
          el("td", {}, c.reason || ""));
      })));
  }

  function sentenceTable(s, groups) {
    return el("table", {class: "t sentences"},
      el("thead", {}, el("tr", {}, el("th", {}, "context"), el("th", {}, "sentence"), el("th", {class: "num"}, "needed"))),
      el("tbody", {}, groups.map(function (g, k) {
        return g.map(function (x) {
          const text = x.at ? s.contexts[x.at[0]].slice(x.at[1], x.at[2]) : x.sentence;
          return el("tr", {}, el("td", {}, String((x.at ? x.at[0] : k) + 1)), el("td", {}, text),
            el("td", {class: "num " + (x.rating >= 0.5 ? "good" : "muted")}, fmt(x.rating, 2)));
        });
      })));
  }

  function needsTable(needs) {
    return el("table", {class: "t needs"},
      el("thead", {}, el("tr", {}, el("th", {}, "information the question asks for"), el("th", {}, "kind"),
        el("th", {class: "num"}, "met"))),
      el("tbody", {}, needs.map(function (n) {
        return typeof n === "object" && n !== null
          ? el("tr", {}, el("td", {}, n.need), el("td", {}, n.type || ""),
            el("td", {class: "num " + (n.met >= 0.5 ? "good" : "bad")}, fmt(n.met, 2)))
          : el("tr", {}, el("td", {colspan: 3}, String(n)));
      })));
  }

  /* A conversation metric's verdict on each exchange (details.turns) */
  function turnsTable(turns) {
    return el("table", {class: "t turns"},
      el("thead", {}, el("tr", {}, ["exchange", "verdict", "reason"].map(function (h) { return el("th", {}, h); }))),
      el("tbody", {}, turns.map(function (t) {
        if (typeof t !== "object" || t === null) return el("tr", {}, el("td", {colspan: 3}, String(t)));
        const conf = t.confidence === null || t.confidence === undefined || t.confidence === 1 || t.confidence === 0
          ? "" : " (" + fmt(t.confidence, 2) + ")";
        return el("tr", {"data-turn": t.turn}, el("td", {class: "num"}, String(t.turn)),
          el("td", {}, el("span", {class: "badge " + (t.ok ? "good" : "bad")}, (t.ok ? "yes" : "no") + conf)),
          el("td", {}, t.reason || ""));
      })));
  }

  function factsTable(facts) {
    return el("table", {class: "t facts"},
      el("thead", {}, el("tr", {}, el("th", {class: "num"}, "exchange"), el("th", {}, "fact the user stated"))),
      el("tbody", {}, facts.map(function (f) {
        return typeof f === "object" && f !== null ? el("tr", {}, el("td", {class: "num"}, String(f.turn)), el("td", {}, f.fact))
          : el("tr", {}, el("td", {colspan: 2}, String(f)));
      })));
  }

  function requestsTable(reqs) {
    return el("table", {class: "t requests"},
      el("thead", {}, el("tr", {}, ["request", "met", "reason"].map(function (h) { return el("th", {}, h); }))),
      el("tbody", {}, reqs.map(function (r) {
        if (typeof r !== "object" || r === null) return el("tr", {}, el("td", {colspan: 3}, String(r)));
        return el("tr", {}, el("td", {}, r.request),
          el("td", {}, el("span", {class: "badge " + (r.met ? "good" : "bad")}, r.met ? "met" : "not met")),
          el("td", {}, r.reason || ""));
      })));
  }

  const SHOWN = {claims: 1, questions: 1, contexts: 1, needs: 1, turns: 1, facts: 1, requests: 1};

  /* The tables of what a metric recorded (claims, questions, contexts, information needs, and a
     conversation metric's facts, requests and per-exchange verdicts). */
  function detailTables(s, d) {
    return [
      Array.isArray(d.facts) && d.facts.length ? factsTable(d.facts) : null,
      Array.isArray(d.requests) && d.requests.length ? requestsTable(d.requests) : null,
      Array.isArray(d.turns) && d.turns.length ? turnsTable(d.turns) : null,
      Array.isArray(d.claims) && d.claims.length ? claimsTable(s, d.claims) : null,
      Array.isArray(d.questions) && d.questions.length ? questionsTable(d.questions) : null,
      Array.isArray(d.needs) && d.needs.length ? needsTable(d.needs) : null,
      Array.isArray(d.contexts) && d.contexts.length
        ? (Array.isArray(d.contexts[0]) ? sentenceTable(s, d.contexts) : perContextTable(s, d.contexts)) : null,
    ];
  }

  function otherDetails(d) {
    const pairs = Object.entries(d).filter(function (e) { return (!SHOWN[e[0]] || !Array.isArray(e[1])) && e[0] !== "first"; });
    if (!pairs.length) return null;
    return el("details", {}, el("summary", {class: "muted"}, "other details"),
      el("pre", {class: "text"}, JSON.stringify(Object.fromEntries(pairs), null, 2)));
  }

  function callsTable(j) {
    const calls = j.calls || [];
    if (!calls.length) return null;
    return el("details", {class: "calls"}, el("summary", {class: "muted"}, calls.length + " judge call(s)"),
      el("table", {class: "t"},
        el("thead", {}, el("tr", {}, ["step", "model", "latency", "tokens", "cached", "attempts", "error"].map(function (h) { return el("th", {}, h); }))),
        el("tbody", {}, calls.map(function (c) {
          const u = c.usage || {};
          return [el("tr", {}, el("td", {}, c.step || ""), el("td", {}, c.model || ""),
            el("td", {class: "num"}, c.latency_s === null || c.latency_s === undefined ? "" : fmt(c.latency_s, 2) + " s"),
            el("td", {class: "num"}, (u.prompt_tokens || 0) + " + " + (u.completion_tokens || 0)),
            el("td", {}, c.cached ? "yes" : ""), el("td", {class: "num"}, c.attempts === undefined ? "" : String(c.attempts)),
            el("td", {class: "bad"}, c.error ? String(c.error) : "")),
            c.reply ? el("tr", {}, el("td", {colspan: 7}, el("pre", {class: "raw"}, String(c.reply)))) : null];
        }))));
  }

  /* One metric's part of a sample: ``j`` is the sample's score of metric ``name`` (null: not scored). */
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
    if (Array.isArray(d.samples) && d.first && typeof d.first === "object") {
      /* repeated judging (--samples N): each judgement's value, then the first valid one in full */
      RM.add(box, el("div", {class: "repeats"}, "judged " + d.samples.length + " times: " +
        d.samples.map(function (v) { return v === null ? "invalid" : fmt(v); }).join(", ") +
        " (mean " + fmt(d.mean) + ", SD " + fmt(d.std) + "); the first valid judgement:"),
        detailTables(s, d.first), otherDetails(d.first));
    } else {
      RM.add(box, detailTables(s, d), otherDetails(d));
    }
    const u = j.usage || {};
    RM.add(box, el("div", {class: "muted usage"}, (u.requests || 0) + " request(s), " + (u.prompt_tokens || 0) +
      " prompt + " + (u.completion_tokens || 0) + " completion tokens" + (u.cached_requests ? ", " + u.cached_requests + " from cache" : "") +
      ", " + fmt(j.duration_s, 2) + " s"));
    RM.add(box, callsTable(j));
    return box;
  }

  /* [context, start, end, class, label] of the evidence of each claim and each needed sentence */
  function marksOf(s, names) {
    const out = [];
    s.scores.forEach(function (j, k) {
      const top = (j && j.details) || {}, name = names[k];
      const d = top.first && typeof top.first === "object" && Array.isArray(top.samples) ? top.first : top;
      (Array.isArray(d.claims) ? d.claims : []).forEach(function (c, n) {
        if (c && c.evidence_at) {
          out.push(c.evidence_at.concat([c.supported ? "ev-sup" : "ev-unsup",
            name + ", claim " + (n + 1) + (c.supported ? " (supported)" : " (not supported)")]));
        }
      });
      (Array.isArray(d.contexts) ? d.contexts : []).forEach(function (g) {
        (Array.isArray(g) ? g : []).forEach(function (x) {
          if (x && x.at && x.rating >= 0.5) out.push(x.at.concat(["rel", name + ": needed (rating " + fmt(x.rating, 2) + ")"]));
        });
      });
    });
    return out;
  }

  /* The sample's contexts, each with the evidence and needed sentences of its scores highlighted;
     ``names``: the metric of each of ``s.scores``. */
  function contexts(s, names) {
    const all = marksOf(s, names);
    return s.contexts.map(function (c, k) {
      const marks = all.filter(function (m) { return m[0] === k; }).map(function (m) { return [m[1], m[2], m[3], m[4]]; });
      return [el("h3", {}, "context " + (k + 1)), el("div", {class: "text context", "data-context": k}, RM.highlight(c, marks))];
    });
  }

  function legend() {
    return el("div", {class: "muted"}, "highlighted: ", el("mark", {class: "ev-sup"}, "evidence of a supported claim"), " ",
      el("mark", {class: "ev-unsup"}, "evidence of an unsupported claim"), " ", el("mark", {class: "rel"}, "sentence needed for the question"));
  }

  /* ---------------------------------------------------------------- conversations as a chat */

  function bubble(m) {
    const role = m.role || "?";
    const box = el("div", {class: "msg msg-" + role, "data-role": role});
    RM.add(box, el("div", {class: "who muted"}, role + (m.name ? " \u00b7 " + m.name : "")));
    if (role === "tool") {
      return RM.add(box, el("details", {}, el("summary", {class: "muted"}, "tool result" + (m.tool_call_id ? " for " + m.tool_call_id : "")),
        el("div", {class: "text"}, m.content || "")));
    }
    if (m.content) RM.add(box, el("div", {class: "text"}, m.content));
    (m.tool_calls || []).forEach(function (c) {
      RM.add(box, el("div", {class: "tool-call mono"}, "calls " + (c.name || "?") + "(" + (c.arguments || "") + ")"));
    });
    if (m.contexts && m.contexts.length) {
      RM.add(box, el("details", {}, el("summary", {class: "muted"}, m.contexts.length + " context(s) given with this answer"),
        m.contexts.map(function (c) { return el("div", {class: "text context"}, c); })));
    }
    if (m.reference) RM.add(box, el("div", {class: "muted"}, "reference: ", m.reference));
    return box;
  }

  /* A conversation's messages as a chat (``messages``: html_data's, each with its ``turn`` and
     ``answer``); ``after(turn)`` may give nodes to show after that turn's answer. */
  function chat(messages, after) {
    return el("div", {class: "chat"}, messages.map(function (m) {
      const b = bubble(m);
      return m.answer && after ? [b, after(m.turn)] : b;
    }));
  }

  /* An agent's tool calls as numbered steps (html_data's ``steps``): the call, an excerpt of its
     result, and what each trajectory metric said of it. */
  function trajectory(steps) {
    if (!steps || !steps.length) return null;
    return el("div", {class: "trajectory"}, el("h3", {}, steps.length + " tool call(s)"),
      el("table", {class: "steps"},
        el("thead", {}, el("tr", {}, ["#", "call", "result", "verdicts"].map(function (h) { return el("th", {}, h); }))),
        el("tbody", {}, steps.map(function (st) {
          return el("tr", {class: "step", "data-step": String(st.index)},
            el("td", {class: "mono"}, String(st.index)),
            el("td", {class: "mono call"}, st.name + "(" + (st.arguments || "") + ")"),
            el("td", {class: "result"}, st.result === null || st.result === undefined
              ? el("span", {class: "muted"}, "no result") : st.result),
            el("td", {class: "verdicts"}, (st.verdicts || []).map(function (v) {
              return el("div", {class: v.ok ? "ok" : "bad", title: v.metric}, v.metric + ": " + v.text);
            })));
        }))));
  }

  /* A turn sample's place in its conversation: the history as a chat, then its question as
     written and the standalone question its metrics scored it with. */
  function turnContext(s) {
    if (s.turn === null || s.turn === undefined) return null;
    return [
      el("h3", {}, "conversation " + (s.conversation_id || "") + " \u00b7 turn " + s.turn),
      s.history && s.history.length ? el("div", {class: "chat history"}, s.history.map(bubble))
        : el("div", {class: "muted"}, "the first turn: no history"),
      s.standalone_question ? el("div", {class: "standalone"}, el("span", {class: "muted"}, "scored as: "),
        el("span", {class: "standalone-text"}, s.standalone_question)) : null,
    ];
  }

  /* a conversation's line: its first user message */
  function questionOf(s) {
    if (!s.messages) return s.question;
    const first = s.messages.find(function (m) { return m.role === "user"; });
    return "[conversation] " + (first ? first.content : "");
  }

  RM.sampleView = {dl: dl, textBlock: textBlock, metricBlock: metricBlock, contexts: contexts, legend: legend,
    chat: chat, trajectory: trajectory, turnContext: turnContext, questionOf: questionOf};
})();
