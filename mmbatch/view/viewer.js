"use strict";
const DATA = JSON.parse(document.getElementById("data").textContent);
const PAGE = Number(document.getElementById("data").dataset.pageSize);
const $ = (id) => document.getElementById(id);
const esc = (s) => String(s ?? "").replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;",
  '"': "&quot;", "'": "&#39;"}[c]));
// Option texts are shown in lists and table cells, where a line break would fold into a space: keep it a line break.
const lines = (s) => esc(s).replace(/\r?\n/g, "<br>");
const FILTERS = ["b", "s", "c", "mi", "v", "em", "q"];
let state = {}; let shown = [];
const byKey = new Map(DATA.rows.map((r) => [r.k, r]));
const groups = new Map();
for (const r of DATA.rows) { const g = r.b + "|" + r.s + "|" + r.g; if (!groups.has(g)) groups.set(g, []); groups.get(g).push(r); }

function verdict(a) {
  if (!a) return "absent";
  if (a.err || a.em === "error") return "error";
  if (a.em === "unmatched" || a.x == null) return "unmatched";
  if (a.hit === 1) return "right";
  if (a.hit === 0) return "wrong";
  if (a.sc != null) return a.sc >= 1 ? "right" : a.sc <= 0 ? "wrong" : "partly right";
  return "unscored";
}
function mark(a) {
  const v = verdict(a);
  const label = a && a.x != null ? esc(a.x) + " " : "";
  // a graded answer kind (a hit only for 0/1 kinds) shows its score beside the verdict
  const graded = a && a.hit == null && a.sc != null ? ` <span class="score">${a.sc.toFixed(2)}</span>` : "";
  if (v === "right") return `<span class="ok">${label}✓</span>${graded}`;
  if (v === "wrong") return `<span class="bad">${label}✗</span>${graded}`;
  if (v === "partly right") return `<span class="part">${label}~</span>${graded}`;
  if (v === "error") return `<span class="err">error</span>`;
  if (v === "unmatched") return `<span class="none">unmatched</span>`;
  if (v === "absent") return `<span class="none">–</span>`;
  return `<span class="none">${label}</span>`;
}
function options(id, values, label) {
  const select = $(id);
  select.innerHTML = `<option value="">${label}</option>` +
    [...values].sort().map((v) => `<option value="${esc(v)}">${esc(v)}</option>`).join("");
}
function readHash() {
  const params = new URLSearchParams(location.hash.slice(1));
  state = Object.fromEntries(params.entries());
  for (const f of FILTERS) if ($("f-" + f)) $("f-" + f).value = state[f] ?? (f === "mi" ? "0" : "");
}
function writeHash(keepPage) {
  const params = new URLSearchParams();
  for (const f of FILTERS) { const v = $("f-" + f).value; if (v && !(f === "mi" && v === "0")) params.set(f, v); }
  if (keepPage && state.p) params.set("p", state.p);
  if (state.row) params.set("row", state.row);
  history.replaceState(null, "", "#" + params.toString());
  state = Object.fromEntries(params.entries());
}
function matches(r) {
  if (state.b && r.b !== state.b) return false;
  if (state.s && r.s !== state.s) return false;
  if (state.c && r.c !== state.c) return false;
  const a = r.m[Number(state.mi || 0)];
  if (state.v === "disagree") { const v = r.m.map((x) => x && x.x); if (new Set(v).size < 2) return false; }
  else if (state.v && verdict(a) !== state.v) return false;
  if (state.em && (!a || a.em !== state.em)) return false;
  if (state.q) {
    const q = state.q.toLowerCase();
    const text = [r.q, r.h, ...Object.values(r.o), ...r.m.map((x) => x && x.pred)].join(" ").toLowerCase();
    if (!text.includes(q)) return false;
  }
  return true;
}
function renderList() {
  shown = DATA.rows.filter(matches);
  const pages = Math.max(1, Math.ceil(shown.length / PAGE));
  const page = Math.min(Math.max(1, Number(state.p || 1)), pages);
  state.p = String(page);
  const start = (page - 1) * PAGE;
  $("count").textContent = shown.length;
  $("range").textContent = shown.length ? `rows ${start + 1}–${Math.min(start + PAGE, shown.length)}` : "no rows";
  $("pageinfo").textContent = `page ${page} of ${pages}`;
  $("prev").disabled = page <= 1; $("next").disabled = page >= pages;
  const body = shown.slice(start, start + PAGE).map((r) => `<tr class="row${state.row === r.k ? " open" : ""}"
      data-key="${esc(r.k)}"><td>${r.i}</td><td>${esc(r.b)}${r.s ? " · " + esc(r.s) : ""}</td>
      <td title="${esc(r.c)}">${esc(r.c ?? r.dt ?? "")}</td><td title="${esc(r.q)}">${esc(r.q)}</td>
      <td>${esc(r.a ?? "")}</td>${r.m.map((a) => `<td>${mark(a)}</td>`).join("")}</tr>`).join("");
  $("rows").innerHTML = body;
}
function pictures(ids, cls) {
  if (!ids || !ids.length) return "";
  return `<div class="pictures ${cls}">` + ids.map((id) => `<img alt="picture" src="${DATA.pictures[id]}">`).join("") +
    "</div>";
}
function numbers(label, values, letters) {
  if (!values) return "";
  return `<div class="k">${label}</div><div><table class="small"><tr>${letters.map((l) => `<th>${esc(l)}</th>`).join("")}
    </tr><tr>${values.map((v) => `<td>${v == null ? "–" : v.toFixed(4)}</td>`).join("")}</tr></table></div>`;
}
function answerCard(name, a, r) {
  if (!a) return `<div class="answer"><h3>${esc(name)}</h3><p class="none">this model has no such row</p></div>`;
  const letters = Object.keys(r.o);
  let extraction = "";
  if (a.jp) {
    extraction += `<div class="k">judge prompt</div><div><details class="judge-prompt"><summary>${esc(a.jm)}</summary>
      <pre>${esc(a.jp)}</pre></details></div>`;
  }
  if (a.jr != null) extraction += `<div class="k">judge reply</div><div><pre class="judge-raw">${esc(a.jr)}</pre></div>`;
  return `<div class="answer" data-model="${esc(name)}"><h3>${esc(name)} ${mark(a)}</h3><div class="kv">
    ${a.gen ? `<div class="k">generated picture</div><div>${pictures([a.gen], "generated")}</div>` : ""}
    <div class="k">prediction</div><div><pre class="prediction">${esc(a.pred ?? "")}</pre></div>
    <div class="k">extracted</div><div>${esc(a.x ?? "—")}</div>
    <div class="k">method</div><div class="method">${esc(a.em ?? "")}${a.note ? " — " + esc(a.note) : ""}</div>
    ${a.sc != null ? `<div class="k">score</div><div>${a.sc.toFixed(4)}</div>` : ""}
    ${extraction}${numbers("option log-probs", a.lp, letters)}${numbers("CLIP similarity", a.sim, letters)}
    ${a.err ? `<div class="k">error</div><div class="err">${esc(a.err)}</div>` : ""}
    <div class="k">verdict</div><div class="verdict">${verdict(a)}</div></div></div>`;
}
function groupTable(r) {
  const members = groups.get(r.b + "|" + r.s + "|" + r.g) || [];
  if (members.length < 2) return "";
  const title = Object.keys(r.o).length ? "CircularEval group (the same question, options rotated)" : "Same image";
  const head = `<tr><th>index</th><th>question / options</th><th>answer</th>${DATA.models.map((m) => `<th>${esc(m)}</th>`).join("")}</tr>`;
  const body = members.map((x) => `<tr><td class="${x.k === r.k ? "cur" : ""}"><a href="#" data-open="${esc(x.k)}">${x.i}</a></td>
    <td>${Object.keys(x.o).length ? Object.entries(x.o).map(([l, t]) => `${esc(l)}. ${lines(t)}`).join("<br>") : esc(x.q)}</td>
    <td>${esc(x.a ?? "")}</td>${x.m.map((a) => `<td>${mark(a)}${a && a.pred ? "<br><small>" + esc(a.pred.slice(0, 80)) + "</small>" : ""}</td>`).join("")}</tr>`).join("");
  return `<div class="group"><h3>${title}: ${members.length} rows</h3><table class="small">${head}${body}</table></div>`;
}
function renderDetail() {
  const r = state.row && byKey.get(state.row);
  const box = $("detail");
  if (!r) { box.className = ""; box.innerHTML = ""; return; }
  box.className = "shown";
  const opts = Object.entries(r.o).map(([l, t]) => `<li class="${l === r.a ? "right" : ""}">${esc(l)}. ${lines(t)}${l === r.a ? " ✓" : ""}</li>`).join("");
  box.innerHTML = `<button type="button" class="close" data-close="1">close ✕</button><h2>Row ${r.i} · ${esc(r.b)}${r.s ? " · " + esc(r.s) : ""}${r.c ? " · " + esc(r.c) : ""}</h2>
    ${pictures(r.img, "")}${pictures(r.vid, "frames")}
    ${r.h ? `<div class="hint">${esc(r.h)}</div>` : ""}<div class="question">${esc(r.q)}</div>
    ${opts ? `<ol class="options">${opts}</ol>` : ""}<div>answer: <b>${esc(r.a ?? "—")}</b></div>
    ${r.p ? `<details><summary>rendered prompt</summary><pre class="prompt">${esc(r.p)}</pre></details>` : ""}
    <div class="answers">${r.m.map((a, i) => answerCard(DATA.models[i], a, r)).join("")}</div>${groupTable(r)}`;
  countImages();
}
function countImages() {
  const images = [...document.images];
  const update = () => {
    document.body.dataset.imagesLoaded = images.filter((i) => i.complete && i.naturalWidth > 0).length;
    document.body.dataset.imagesBroken = images.filter((i) => i.complete && i.naturalWidth === 0).length;
  };
  images.forEach((i) => { i.addEventListener("load", update); i.addEventListener("error", update); });
  update();
}
function render() { renderList(); renderDetail(); document.body.dataset.ready = "1"; }
function init() {
  options("f-b", new Set(DATA.rows.map((r) => r.b)), "all benchmarks");
  options("f-s", new Set(DATA.rows.map((r) => r.s).filter(Boolean)), "all splits");
  options("f-c", new Set(DATA.rows.map((r) => r.c).filter(Boolean)), "all categories");
  options("f-em", new Set(DATA.rows.flatMap((r) => r.m.map((a) => a && a.em)).filter(Boolean)), "any method");
  $("f-mi").innerHTML = DATA.models.map((m, i) => `<option value="${i}">${esc(m)}</option>`).join("");
  readHash();
  for (const f of FILTERS) $("f-" + f).addEventListener(f === "q" ? "input" : "change", () => {
    state.p = "1"; writeHash(false); render(); });
  $("prev").onclick = () => { state.p = String(Number(state.p) - 1); writeHash(true); renderList(); };
  $("next").onclick = () => { state.p = String(Number(state.p) + 1); writeHash(true); renderList(); };
  document.addEventListener("click", (e) => {
    if (e.target.closest("[data-close]")) { delete state.row; writeHash(true); render(); return; }
    const open = e.target.closest("[data-open]");
    const tr = e.target.closest("tr.row");
    const key = open ? open.dataset.open : tr ? tr.dataset.key : null;
    if (!key) return;
    e.preventDefault(); state.row = key; writeHash(true); render();
    $("detail").scrollIntoView({block: "start"});
  });
  window.addEventListener("hashchange", () => { readHash(); render(); });
  render();
  // Time from navigation start to the first full render (data parsed, list and row drawn), for docs/benchmarks.md.
  document.body.dataset.renderMs = String(Math.round(performance.now()));
}
window.addEventListener("error", (e) => { document.body.dataset.error = String(e.message); });
init();
