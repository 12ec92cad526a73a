// The vetting page. Every value from the server is set as text (textContent, attributes),
// never as markup. An answer counts as saved only when the server said so.
"use strict";
(function () {
  const token = new URLSearchParams(window.location.search).get("token") || "";
  const $ = (id) => document.getElementById(id);
  let client = sessionStorage.getItem("bayeval-vet-client");
  if (!client) {
    const bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    client = "tab-" + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
    sessionStorage.setItem("bayeval-vet-client", client);
  }
  const who = $("annotator");
  who.value = localStorage.getItem("bayeval-vet-annotator") || "";
  who.addEventListener("change", () => localStorage.setItem("bayeval-vet-annotator", who.value.trim()));

  let current = null;
  let busy = false;
  let waiting = true;
  const WAIT = {
    others: "the rest of this batch is with other people; waiting for the next batch…",
    batch: "choosing the next batch (refitting)…",
    budget: "the budget is reached: thank you. Raise it (--budget) to go on.",
    done: "every item is vetted or skipped: thank you.",
  };

  async function api(path, payload) {
    const opts = payload === undefined
      ? { headers: { "X-Bayeval-Token": token } }
      : { method: "POST", headers: { "Content-Type": "application/json", "X-Bayeval-Token": token },
          body: JSON.stringify(payload) };
    let resp;
    try {
      resp = await fetch(path, opts);
    } catch (err) {
      throw new Error("the server cannot be reached (stopped?): " + err.message);
    }
    let data = null;
    try { data = await resp.json(); } catch (err) { data = null; }
    if (!resp.ok) {
      throw new Error((data && data.error) || ("HTTP " + resp.status));
    }
    return data;
  }

  function say(text, ok) {
    const m = $("message");
    m.textContent = text;
    m.className = ok ? "ok" : "";
  }

  function setButtons(on) {
    for (const id of ["yes", "no", "skip"]) { $(id).disabled = !on; }
  }

  function fmt(x) { return x === null || x === undefined ? "–" : Number(x).toFixed(3); }

  function show(next) {
    current = next.item;
    const img = $("image");
    $("image-note").textContent = "";
    $("again").textContent = "";
    if (!current) {
      waiting = true;
      setButtons(false);
      $("status").textContent = WAIT[next.status] || next.status;
      img.className = "";
      img.removeAttribute("src");
      for (const id of ["text", "item-id", "category", "score"]) { $(id).textContent = ""; }
      return;
    }
    waiting = false;
    $("status").textContent = "Is this item positive?";
    $("item-id").textContent = String(current.item);
    $("category").textContent = current.category === null ? "–" : current.category;
    $("score").textContent = current.scores
      ? Object.entries(current.scores).map(([k, v]) => k + " " + Number(v).toPrecision(4)).join(" · ")
      : Number(current.score).toPrecision(4);
    $("text").textContent = current.text === null ? "" : current.text;
    const im = current.image;
    if (im && (im.kind === "file" || im.kind === "url")) {
      img.src = im.kind === "file" ? im.src + "?token=" + encodeURIComponent(token) : im.src;
      img.className = im.kind === "url" ? "shown large" : "shown";
    } else {
      img.className = "";
      img.removeAttribute("src");
      if (im && im.kind === "missing") { $("image-note").textContent = "image not shown: " + im.why; }
    }
    if (next.status === "again") {
      $("again").textContent = "You answered " + (next.earlier ? "yes" : "no") +
        " here. Answer again: your new answer replaces it (skip keeps it).";
    }
    setButtons(true);
  }

  async function act(path, payload, done) {
    if (busy) { return; }
    busy = true;
    setButtons(false);
    try {
      const resp = await api(path, payload);
      done(resp);
      show(resp.next);
    } catch (err) {
      say("NOT SAVED: " + err.message, false);
      if (current) { setButtons(true); }
    } finally {
      busy = false;
    }
  }

  function answer(label) {
    if (!current) { return; }
    const item = current.item;
    const payload = { client: client, item: item, label: label };
    if (who.value.trim()) { payload.annotator = who.value.trim(); }
    act("api/answer", payload, (r) => say("saved: " + String(item) + " = " + (r.recorded.label ? "yes" : "no"), true));
  }

  function skip() {
    if (!current) { return; }
    const item = current.item;
    act("api/skip", { client: client, item: item }, (r) => say(r.kept === undefined ? "skipped: " + String(item)
      : "kept your earlier answer for " + String(item) + " (" + (r.kept ? "yes" : "no") + ")", true));
  }

  function undo() {
    act("api/undo", { client: client }, (r) => say("undone: " + String(r.undone.item) + " is back", true));
  }

  function drawChart(history, estimate) {
    const svg = $("chart");
    while (svg.firstChild) { svg.removeChild(svg.firstChild); }
    const NS = "http://www.w3.org/2000/svg";
    const el = (name, attrs, text) => {
      const e = document.createElementNS(NS, name);
      for (const [k, v] of Object.entries(attrs)) { e.setAttribute(k, String(v)); }
      if (text !== undefined) { e.textContent = text; }
      svg.appendChild(e);
      return e;
    };
    const pts = history.filter((h) => h.lower !== null && h.upper !== null && h.mean !== null);
    if (pts.length === 0) {
      el("text", { x: 10, y: 80, "font-size": 12, fill: "#666" }, "the interval after each refit appears here");
      return;
    }
    const W = 320, H = 160, L = 40, R = 10, T = 10, B = 25;
    let lo = Math.min(...pts.map((p) => p.lower)), hi = Math.max(...pts.map((p) => p.upper));
    if (estimate && estimate.kind === "gap") { lo = Math.min(lo, 0); hi = Math.max(hi, 0); }
    if (hi - lo < 1e-9) { lo -= 0.05; hi += 0.05; }
    const pad = 0.05 * (hi - lo); lo -= pad; hi += pad;
    const xs = pts.map((p) => p.n_vetted);
    const x0 = Math.min(...xs), x1 = Math.max(...xs) === x0 ? x0 + 1 : Math.max(...xs);
    const X = (v) => L + (W - L - R) * (v - x0) / (x1 - x0);
    const Y = (v) => T + (H - T - B) * (hi - v) / (hi - lo);
    el("line", { x1: L, y1: T, x2: L, y2: H - B, stroke: "#999" });
    el("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: "#999" });
    el("text", { x: 2, y: Y(hi) + 10, "font-size": 10 }, hi.toFixed(2));
    el("text", { x: 2, y: Y(lo), "font-size": 10 }, lo.toFixed(2));
    el("text", { x: L, y: H - 5, "font-size": 10 }, String(x0));
    el("text", { x: W - R, y: H - 5, "font-size": 10, "text-anchor": "end" }, String(x1) + " vetted");
    if (estimate && estimate.kind === "gap") {  // no gap: the classifiers are equally good
      el("line", { x1: L, y1: Y(0), x2: W - R, y2: Y(0), stroke: "#b55", "stroke-dasharray": "4 3" });
    }
    for (const p of pts) {
      el("line", { x1: X(p.n_vetted), y1: Y(p.lower), x2: X(p.n_vetted), y2: Y(p.upper), stroke: "#7aa6d8", "stroke-width": 4 });
    }
    el("polyline", { points: pts.map((p) => X(p.n_vetted) + "," + Y(p.mean)).join(" "), fill: "none", stroke: "#1f4e8c", "stroke-width": 1.5 });
    for (const p of pts) { el("circle", { cx: X(p.n_vetted), cy: Y(p.mean), r: 2.5, fill: "#1f4e8c" }); }
  }

  function showState(s) {
    if (s.title) { $("title").textContent = s.title; document.title = "vet: " + s.title; }
    const e = s.estimate;
    $("verdict").textContent = "";
    if (e && e.kind === "gap") {
      const a = e.a || "A", b = e.b || "B";
      $("estimate-label").textContent = "gap: " + e.label;
      $("estimate").textContent = fmt(e.mean) + "  [" + fmt(e.lower) + ", " + fmt(e.upper) + "]  (" +
        Math.round(100 * e.hdi_prob) + "% interval);  P(" + a + " better) = " + fmt(e.p_better) +
        (e.p_rope === null || e.p_rope === undefined ? "" : ";  P(|gap| ≤ " + e.width + ") = " + fmt(e.p_rope));
      if (e.decided) {
        const lvl = e.level ? " (probability > " + e.level + ")" : "";
        $("verdict").textContent = "decided: " + (e.decided === "equivalent"
          ? a + " and " + b + " are practically equivalent" + lvl
          : e.decided + " is better" + lvl) + ". You may stop here.";
      } else if (e.a) {
        $("verdict").textContent = "not decided yet: keep vetting.";
      }
    } else if (e) {
      $("estimate-label").textContent = e.label;
      $("estimate").textContent = fmt(e.mean) + "  [" + fmt(e.lower) + ", " + fmt(e.upper) + "]  (" +
        Math.round(100 * e.hdi_prob) + "% credible interval)";
    }
    const cav = $("caveats");
    cav.textContent = "";
    for (const c of (e && e.caveats) || []) {  // what the labels cannot tell the estimate: beside it
      const li = document.createElement("li");
      li.textContent = c;
      cav.appendChild(li);
    }
    $("refit").textContent = s.refitting ? "refitting…" : (s.error ? "the last refit failed: " + s.error : "");
    drawChart(s.history, e);
    const p = s.progress;
    $("progress").textContent = p.vetted + " of " + p.items + " items vetted" +
      (p.vetted_from_file ? " (" + p.vetted_from_file + " in the card's label column, " + p.vetted_from_store +
        " in the label store)" : "") +
      (p.budget ? " (budget " + p.budget + ")" : "") + "; " + p.remaining_in_batch + " of " + p.batch_size +
      " left in batch " + (p.batch === null ? "–" : p.batch) +
      (p.remaining_in_earlier_batches ? " and " + p.remaining_in_earlier_batches + " in earlier batches" : "") +
      (p.skipped ? "; " + p.skipped + " skipped" : "");
  }

  async function poll() {
    try {
      showState(await api("api/state?client=" + encodeURIComponent(client)));
      if (waiting && !busy) { show(await api("api/next", { client: client })); }
      if ($("message").textContent.startsWith("the server cannot")) { say("", true); }
    } catch (err) {
      say(err.message, false);
    }
  }

  $("yes").addEventListener("click", () => answer("y"));
  $("no").addEventListener("click", () => answer("n"));
  $("skip").addEventListener("click", skip);
  $("undo").addEventListener("click", undo);
  document.addEventListener("keydown", (ev) => {
    if (ev.target === who || ev.ctrlKey || ev.metaKey || ev.altKey) { return; }
    const key = ev.key.toLowerCase();
    if (key === "y") { answer("y"); } else if (key === "n") { answer("n"); }
    else if (key === "s") { skip(); } else if (key === "u") { undo(); } else { return; }
    ev.preventDefault();
  });
  poll();
  setInterval(poll, 2000);
})();
