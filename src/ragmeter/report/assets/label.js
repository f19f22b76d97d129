/* ragmeter view: the labelling page. One sample at a time, in the order of the run's draw; a key
   press stores a label at once (POST, with the server's token). Reads RM.data()
   (ragmeter.report.labelling.LabelDesk.page); every word comes from D.texts (the metric
   descriptions' [label_page] table, en or zh). textContent only: sample text is never markup. */
(function () {
  const {el, fmt} = RM;
  const D = RM.data();
  const T = D.texts;
  const app = document.getElementById("app");
  const base = D.run.report + "/label";
  const metric = D.metric.name;
  const FOLD = 1500; /* contexts longer than this start folded */
  const KEYS = {"1": 1, "0": 0, "h": 0.5};

  let payload = D.start; /* {metric, progress, sample} of the sample shown */
  let mode = D.mode; /* "draw": reached along the draw; "pick": opened out of its order */
  let blind = D.blind;
  let last = null; /* the label given last: {idx, value, score} */
  let pending = 0;
  let chain = Promise.resolve();

  /* T[key] with each {name} replaced by values[name] (as text) */
  function t(key, values) {
    const s = T[key] === undefined ? key : T[key];
    return s.replace(/\{(\w+)\}/g, function (m, k) {
      return values && values[k] !== undefined && values[k] !== null ? String(values[k]) : m;
    });
  }

  function valueWord(v) {
    return v === 1 ? T.yes : v === 0 ? T.no : v === 0.5 ? T.partly : fmt(v, 2);
  }

  function storedName() {
    try { return window.localStorage.getItem("ragmeter.labeller") || ""; } catch (e) { return ""; }
  }

  /* ---------------------------------------------------------------- talking to the server */
  function sampleUrl(idx) {
    return base + "/sample?metric=" + encodeURIComponent(metric) + (idx === null || idx === undefined ? "" : "&idx=" + idx) +
      "&blind=" + (blind ? "1" : "0");
  }

  async function reply(r) {
    const text = await r.text();
    let data;
    try { data = JSON.parse(text); } catch (e) { data = {error: text || r.statusText}; }
    if (!r.ok && !data.error) data.error = r.status + " " + r.statusText;
    return data;
  }

  async function getJson(url) {
    return reply(await fetch(url, {credentials: "same-origin", cache: "no-store"}));
  }

  async function post(body) {
    return reply(await fetch(base, {
      method: "POST", credentials: "same-origin", cache: "no-store",
      headers: {"Content-Type": "application/json", "X-Ragmeter-Token": D.token || ""},
      body: JSON.stringify(Object.assign({metric: metric, page: D.page}, body)),
    }));
  }

  /* ---------------------------------------------------------------- the page's parts */
  const msg = el("div", {id: "message", class: "message", role: "status", "aria-live": "polite"});
  const progressBox = el("section", {id: "progress", class: "progress"});
  const lastBox = el("div", {id: "last", class: "last muted"});
  const sampleBox = el("section", {id: "sample", class: "sample"});

  function say(text, bad) {
    msg.textContent = text || "";
    msg.className = "message" + (bad ? " bad" : "");
  }

  function header() {
    const metricSel = el("select", {id: "metric", "aria-label": T.metric}, D.metrics.map(function (m) {
      return el("option", {value: m.name, selected: m.name === metric}, m.term ? m.term + " (" + m.name + ")" : m.name);
    }));
    metricSel.addEventListener("change", function () {
      window.location.href = base + "?metric=" + encodeURIComponent(metricSel.value) + "&lang=" + D.lang + (blind ? "" : "&blind=0");
    });
    const name = el("input", {type: "text", id: "labeller", placeholder: T.labeller, "aria-label": T.labeller,
      value: storedName(), maxlength: 200});
    name.addEventListener("keydown", function (e) { if (e.key === "Enter" || e.key === "Escape") name.blur(); });
    name.addEventListener("input", function () {
      try { window.localStorage.setItem("ragmeter.labeller", name.value); } catch (e) { /* storage off */ }
    });
    const blindBox = el("input", {type: "checkbox", id: "blind", checked: blind});
    blindBox.addEventListener("change", function () {
      blind = blindBox.checked;
      const url = new URL(window.location.href);
      url.searchParams.delete("at");
      if (blind) url.searchParams.delete("blind"); else url.searchParams.set("blind", "0");
      try { history.replaceState(null, "", url.pathname + url.search); } catch (e) { /* ignore */ }
      queue(function () { return show(payload.sample ? payload.sample.idx : null); });
    });
    const title = t("title", {metric: D.metric.term || metric});
    document.title = title + " \u00b7 " + D.run.run_id;
    return el("header", {id: "header"},
      el("h1", {}, title),
      el("div", {class: "controls"},
        el("span", {}, t("run", {run: D.run.run_id})),
        RM.link(D.run.report, T.report),
        RM.link("/", T.all_runs),
        el("label", {}, T.metric + " ", metricSel),
        RM.link(base + "?metric=" + encodeURIComponent(metric) + "&lang=" + D.other_lang + (blind ? "" : "&blind=0"),
          T.other_lang),
        name,
        el("label", {for: "blind"}, blindBox, " " + T.blind)),
      D.token ? null : el("div", {class: "warn", id: "read-only"}, T.read_only),
      el("div", {class: "ask", id: "ask"}, D.metric.question),
      D.metric.description ? el("div", {class: "muted"}, D.metric.description) : null);
  }

  function button(key, label, action) {
    return el("button", {type: "button", class: "key", "data-key": key, on: {click: function () { queue(action); }}},
      el("kbd", {}, key), " " + label);
  }

  function buttons() {
    return el("div", {class: "keys", id: "keys"},
      button("1", T.yes, function () { return label(1); }),
      button("h", T.partly, function () { return label(0.5); }),
      button("0", T.no, function () { return label(0); }),
      button("s", T.skip, skip),
      button("u", T.undo, undo),
      button("\u2190", T.previous, function () { return move(-1); }),
      button("\u2192", T.next, function () { return move(1); }),
      button("n", T.next_to_label, toNext),
      el("div", {class: "muted help"}, T.keys));
  }

  function field(label, text, folded) {
    const body = el("div", {class: "text"}, text === null || text === undefined || text === "" ? T.empty : String(text));
    if (folded) return el("details", {class: "field"}, el("summary", {}, label), body);
    return el("div", {class: "field"}, el("h3", {}, label), body);
  }

  function roleName(r) { return T["role_" + r] === undefined ? r : T["role_" + r]; }

  /* a conversation's messages (or a turn's earlier ones), each as its role and its text */
  function messagesBlock(msgs) {
    return el("div", {class: "messages"}, msgs.map(function (m) {
      return el("div", {class: "message-turn role-" + m.role},
        el("div", {class: "role muted"}, roleName(m.role) + (m.name ? " \u00b7 " + m.name : "")),
        el("div", {class: "text"}, m.content === null || m.content === undefined || m.content === "" ? T.empty : String(m.content)),
        m.contexts && m.contexts.length ? el("details", {}, el("summary", {class: "muted"}, T.contexts_field + " (" + m.contexts.length + ")"),
          m.contexts.map(function (c) { return el("div", {class: "text context"}, String(c)); })) : null);
    }));
  }

  function contextsBlock(s) {
    if (!s.contexts.length) return el("div", {class: "muted"}, T.no_contexts);
    return s.contexts.map(function (c, k) {
      const text = String(c);
      const box = el("div", {class: "text context", "data-context": k}, text);
      if (text.length > FOLD) {
        return el("details", {class: "context-fold", "data-context": k},
          el("summary", {}, t("context_folded", {k: k + 1, chars: text.length.toLocaleString()})), box);
      }
      return el("div", {}, el("h3", {}, t("context", {k: k + 1})), box);
    });
  }

  /* the judge's verdict on the label's scale: score at or above the threshold (0.5 without one) */
  function judgeSays(score) {
    const th = D.metric.threshold;
    if (th === null || th === undefined) return score >= 0 && score <= 1 ? score >= 0.5 : null;
    return score >= th;
  }

  function passText(v) {
    const th = D.metric.threshold;
    if (th === null || th === undefined) return "";
    const up = D.metric.higher_is_better;
    return " \u00b7 " + ((up ? v >= th : v <= th) ? t("judge_passes", {cmp: up ? "\u2265" : "\u2264", threshold: th})
      : t("judge_fails", {cmp: up ? "<" : ">", threshold: th}));
  }

  function scoreText(score) {
    if (!score) return "\u2014";
    if (score.error) return t("judge_invalid", {kind: score.error.kind});
    return fmt(score.value) + passText(score.value);
  }

  function agreement(labelValue, score) {
    if (!score || score.error || labelValue === 0.5) return null;
    const says = judgeSays(score.value);
    if (says === null) return null;
    const agree = says === (labelValue >= 0.5);
    return el("span", {class: "badge " + (agree ? "good" : "bad"), "data-agree": agree ? "1" : "0"}, agree ? T.agree : T.disagree);
  }

  function judgeBlock(s) {
    const box = el("div", {class: "judge", id: "judge"}, el("h3", {}, T.judge));
    if (s.score_hidden) {
      RM.add(box, el("div", {class: "muted", id: "score-hidden"}, T.judge_hidden));
      return box;
    }
    const sc = s.score;
    RM.add(box, el("div", {id: "score", class: sc && sc.error ? "bad" : ""}, scoreText(sc), " ",
      s.label ? agreement(s.label.value, sc) : null));
    if (sc && sc.error) RM.add(box, el("div", {class: "text reason"}, sc.error.message));
    else if (sc && sc.reason) RM.add(box, el("details", {}, el("summary", {class: "muted"}, T.reason), el("div", {class: "text reason"}, sc.reason)));
    return box;
  }

  function statusLine(s) {
    if (!s.label) return el("div", {id: "status", class: "status"}, T.unlabelled);
    const lab = s.label;
    return el("div", {id: "status", class: "status labelled", "data-value": lab.value, "data-drawn": lab.drawn},
      t("labelled", {value: valueWord(lab.value), drawn: lab.drawn === "random" ? T.drawn_random : T.drawn_picked,
        by: lab.labeller ? t("by", {name: lab.labeller}) : ""}));
  }

  function renderSample() {
    while (sampleBox.firstChild) sampleBox.removeChild(sampleBox.firstChild);
    const s = payload.sample;
    const p = payload.progress;
    if (!s) {
      sampleBox.removeAttribute("data-idx");
      RM.add(sampleBox, p.n_draw ? el("p", {id: "done", class: "good"}, T.done) : el("p", {id: "empty", class: "warn"}, T.empty_draw));
      return;
    }
    sampleBox.setAttribute("data-idx", s.idx);
    const picked = mode === "pick" && s.in_draw && s.idx !== p.next_idx && !(s.label && s.label.drawn === "random");
    const needsRef = D.metric.requires.indexOf("reference") >= 0;
    RM.add(sampleBox,
      el("div", {class: "where"},
        el("span", {id: "position"}, s.in_draw
          ? t("position", {idx: s.idx, id: s.id ? " \u00b7 " + s.id : "", pos: s.position, total: p.n_draw})
          : "#" + s.idx + (s.id ? " \u00b7 " + s.id : "")),
        statusLine(s)),
      picked ? el("div", {class: "warn", id: "picked-note"}, T.picked_mode) : null,
      s.in_draw ? null : el("div", {class: "bad", id: "not-in-draw"}, T.not_in_draw),
      el("div", {class: "columns"},
        el("div", {class: "left"},
          s.history && s.history.length ? el("details", {class: "field history"},
            el("summary", {}, t("history_field", {n: s.history.length})), messagesBlock(s.history)) : null,
          s.messages ? el("div", {class: "field conversation"}, el("h3", {}, T.conversation_field), messagesBlock(s.messages)) : null,
          s.messages && !s.question ? null : field(T.question_field, s.question),
          s.messages && !s.answer ? null : field(T.answer_field, s.answer),
          s.reference === null || s.reference === undefined ? null : field(T.reference_field, s.reference, !needsRef),
          judgeBlock(s)),
        s.messages && !s.contexts.length ? null
          : el("div", {class: "right"}, el("h2", {}, T.contexts_field + " (" + s.contexts.length + ")"), contextsBlock(s))));
  }

  function renderProgress() {
    while (progressBox.firstChild) progressBox.removeChild(progressBox.firstChild);
    const p = payload.progress, need = p.needed;
    if (!p.n_draw) return; /* nothing to label yet: the sample area says so */
    const width = fmt(need.half_width, 2);
    const line = need.more === 0 && need.reachable ? t("progress_enough", {n: p.n_prefix, width: width})
      : need.reachable ? t("progress", {n: p.n_prefix, more: need.more, width: width})
      : t("progress_unreachable", {n: p.n_prefix, width: width, needed: need.n_needed, total: p.n_draw});
    const bar = el("div", {class: "bar", role: "progressbar", "aria-valuemin": 0, "aria-valuemax": p.n_draw, "aria-valuenow": p.n_prefix},
      el("div", {class: "fill"}));
    bar.firstChild.style.width = (p.n_draw ? 100 * p.n_prefix / p.n_draw : 0) + "%";
    const ppi = need.method.indexOf("ppi++") === 0;
    const cal = p.calibrated;
    RM.add(progressBox,
      el("div", {id: "progress-line", class: "line", title: ppi ? T.progress_formula_ppi : T.progress_formula,
        "data-prefix": p.n_prefix, "data-more": need.more, "data-method": ppi ? "ppi++" : "labels-only"}, line),
      cal ? el("div", {id: "calibrated", class: "muted"}, t("calibrated_now", {width: fmt(cal.half_width, 2)})) : null,
      cal && cal.few_of_a_kind !== null ? el("div", {id: "few", class: "warn"},
        t("few_of_a_kind", {k: cal.few_of_a_kind, n: p.n_prefix})) : null,
      bar,
      p.n_held_back ? el("div", {id: "held-back", class: "warn", "data-held": p.n_held_back},
        t("held_back", {held: p.n_held_back, skipped: p.skipped.length, pos: p.first_skipped_position})) : null,
      p.n_picked ? el("div", {id: "picked", class: "muted"}, t("picked_count", {picked: p.n_picked})) : null,
      p.next_idx === null && p.n_draw ? el("div", {class: "good"}, T.done) : null);
  }

  function renderLast() {
    while (lastBox.firstChild) lastBox.removeChild(lastBox.firstChild);
    if (!last) return;
    RM.add(lastBox, t("last", {idx: last.idx, value: valueWord(last.value), score: scoreText(last.score)}), " ",
      agreement(last.value, last.score));
  }

  function render() {
    renderProgress();
    renderSample();
    renderLast();
  }

  /* ---------------------------------------------------------------- actions (one at a time) */
  function queue(action) {
    pending += 1;
    document.documentElement.setAttribute("data-pending", String(pending));
    chain = chain.then(action).catch(function (e) { say(t("not_saved", {message: String(e && e.message || e)}), true); })
      .then(function () {
        pending -= 1;
        document.documentElement.setAttribute("data-pending", String(pending));
      });
    return chain;
  }

  async function show(idx) {
    const data = await getJson(sampleUrl(idx));
    if (data.error) { say(data.error, true); return; }
    payload = data;
    const url = new URL(window.location.href);
    if (url.searchParams.has("at")) {
      url.searchParams.delete("at"); /* a reload goes on along the draw */
      try { history.replaceState(null, "", url.pathname + url.search); } catch (e) { /* ignore */ }
    }
    render();
  }

  async function label(value) {
    const s = payload.sample;
    if (!s) return;
    if (!D.token) { say(T.read_only, true); return; }
    if (!s.in_draw) { say(T.not_in_draw, true); return; }
    const name = document.getElementById("labeller").value.trim();
    const r = await post({action: "label", idx: s.idx, value: value, mode: mode, labeller: name || null});
    if (r.error) { say(t("not_saved", {message: r.error}), true); return; }
    last = {idx: s.idx, value: r.label.value, score: r.score};
    say(T.saved + ": #" + s.idx + " \u2192 " + valueWord(r.label.value));
    const next = mode === "draw" && r.next_unlabelled !== null ? r.next_unlabelled : r.progress.next_idx;
    mode = "draw";
    await show(next);
  }

  async function skip() {
    const s = payload.sample;
    if (!s) return;
    const next = mode === "draw" && s.in_draw && s.next_unlabelled !== null ? s.next_unlabelled : payload.progress.next_idx;
    mode = "draw";
    say("");
    if (next !== s.idx) await show(next);
  }

  async function move(step) {
    const s = payload.sample;
    let target;
    if (!s) target = step < 0 ? payload.progress.last_in_draw : null;
    else if (!s.in_draw) target = payload.progress.next_idx;
    else target = step < 0 ? s.prev : s.next;
    if (target === null || target === undefined) return;
    mode = "draw";
    say("");
    await show(target);
  }

  async function toNext() {
    mode = "draw";
    say("");
    await show(payload.progress.next_idx);
  }

  async function undo() {
    if (!D.token) { say(T.read_only, true); return; }
    const r = await post({action: "undo"});
    if (r.error) { say(t("not_saved", {message: r.error}), true); return; }
    if (!r.undone) { say(T.nothing_to_undo); return; }
    mode = r.undone.mode;
    if (last && last.idx === r.undone.idx) last = null;
    say(t("undone", {idx: r.undone.idx}));
    await show(r.undone.idx);
  }

  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.target && /^(INPUT|SELECT|TEXTAREA)$/.test(e.target.tagName)) return;
    const k = e.key;
    let action = null;
    if (Object.prototype.hasOwnProperty.call(KEYS, k)) action = function () { return label(KEYS[k]); };
    else if (k === "s") action = skip;
    else if (k === "u") action = undo;
    else if (k === "n") action = toNext;
    else if (k === "ArrowLeft") action = function () { return move(-1); };
    else if (k === "ArrowRight") action = function () { return move(1); };
    if (!action) return;
    e.preventDefault();
    queue(action);
  });

  RM.add(app, header(), progressBox, buttons(), msg, lastBox, sampleBox);
  render();
  document.documentElement.setAttribute("data-pending", "0");
  document.documentElement.setAttribute("data-ready", "1");
})();
