/* ragmeter view: the runs of a store, with links to each run's report and a comparison of two. */
(function () {
  const {el, fmt} = RM;
  const D = RM.data();
  const app = document.getElementById("app");
  const runs = D.runs;

  function runPath(id) { return "/run/" + encodeURIComponent(id); }

  function metricsCell(r) {
    return el("td", {}, r.metrics.map(function (m) {
      return el("div", {class: "metric", "data-metric": m.name}, m.name + " ", el("strong", {}, fmt(m.mean)),
        el("span", {class: "muted"}, " (n " + m.n_scored + ")"),
        m.n_invalid ? el("span", {class: "bad"}, " " + m.n_invalid + " invalid") : null, " ",
        RM.link(runPath(r.run_id) + "/label?metric=" + encodeURIComponent(m.name), "label"));
    }));
  }

  const table = el("table", {class: "t", id: "runs"},
    el("thead", {}, el("tr", {}, ["run", "created", "status", "data", "judge", "samples", "metrics: mean of valid scores"]
      .map(function (h) { return el("th", {}, h); }))),
    el("tbody", {}, runs.map(function (r) {
      return el("tr", {"data-run": r.run_id},
        el("td", {}, RM.link(runPath(r.run_id), r.run_id)),
        el("td", {}, String(r.created_at || "").slice(0, 19).replace("T", " ")),
        el("td", {class: r.status === "finished" ? "" : "warn"}, r.status),
        el("td", {}, r.source || ""),
        el("td", {}, r.judge || ""),
        el("td", {class: "num"}, r.n_samples === null || r.n_samples === undefined ? "" : String(r.n_samples)),
        metricsCell(r));
    })));

  function runSelect(id, pick) {
    return el("select", {id: id, "aria-label": id === "cmp-a" ? "run A" : "run B"}, runs.map(function (r, i) {
      return el("option", {value: r.run_id, selected: i === pick}, r.run_id + " \u00b7 " + (r.source || ""));
    }));
  }
  const a = runSelect("cmp-a", Math.min(1, runs.length - 1)), b = runSelect("cmp-b", 0);
  const go = el("button", {type: "button", id: "cmp-go", on: {click: function () {
    window.location.href = "/compare?a=" + encodeURIComponent(a.value) + "&b=" + encodeURIComponent(b.value);
  }}}, "compare B against A");

  RM.add(app,
    el("h1", {}, "ragmeter runs"),
    el("div", {class: "muted"}, runs.length + " run(s) in " + D.store + "; newest first. Each run links to its report."),
    runs.length >= 2 ? el("div", {class: "controls"}, "A (baseline)", a, "B (candidate)", b, go) : null,
    runs.length ? table : el("p", {}, "No run recorded in this store yet."));
  document.documentElement.setAttribute("data-ready", "1");
})();
