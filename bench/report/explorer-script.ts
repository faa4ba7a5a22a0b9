// The report's one inline script: filter, sort and search the task list, open a task's transcripts. It reads only the page's own escaped markup (data-* attributes, <template>s) and writes text, never HTML.
import { createHash } from "node:crypto"

export const EXPLORER_SCRIPT = `
(() => {
  "use strict";
  const $ = (s, el) => (el || document).querySelector(s);
  const $$ = (s, el) => Array.from((el || document).querySelectorAll(s));
  const table = $("table.tasks");
  if (!table) return;
  const body = $("tbody", table);
  const rows = $$("tr", body);
  const get = (id) => document.getElementById(id);
  const controls = ["f-q", "f-method", "f-group", "f-label", "f-finish", "f-win", "f-tokens"].map(get).filter(Boolean);
  const value = (id) => { const c = get(id); return c ? c.value.trim() : ""; };
  const count = get("f-count");
  const apply = () => {
    const q = value("f-q").toLowerCase();
    const method = value("f-method"), group = value("f-group"), label = value("f-label");
    const finish = value("f-finish"), win = value("f-win"), tokens = value("f-tokens");
    const max = tokens === "" || isNaN(Number(tokens)) ? Infinity : Number(tokens);
    let shown = 0;
    for (const tr of rows) {
      const d = tr.dataset;
      const ok =
        (!method || d.method === method) &&
        (!group || d.group === group) &&
        (!label || (d.labels || "").split(" ").includes(label)) &&
        (!finish || d.finish === finish) &&
        (!win || (d.win || "").split(" ").includes(win)) &&
        (max === Infinity || (d.tokens !== "" && Number(d.tokens) <= max)) &&
        (!q || (d.text || "").includes(q));
      tr.hidden = !ok;
      if (ok) shown++;
    }
    if (count) count.textContent = shown + " of " + rows.length + " tasks";
    const reset = get("f-reset");
    if (reset) reset.disabled = controls.every((c) => c.value === "");
  };
  for (const c of controls) c.addEventListener("input", apply);
  const reset = get("f-reset");
  if (reset) reset.addEventListener("click", () => { for (const c of controls) c.value = ""; apply(); });
  let sortKey = "", ascending = true;
  for (const button of $$("th button[data-sort]", table))
    button.addEventListener("click", () => {
      const key = button.dataset.sort, numeric = button.dataset.type === "num";
      ascending = sortKey === key ? !ascending : true;
      sortKey = key;
      const at = (tr) => tr.dataset[key] || "";
      const number = (v) => (v === "" ? Infinity : Number(v));
      const sorted = rows.slice().sort((x, y) => {
        const a = at(x), b = at(y);
        let c;
        if (numeric) { const na = number(a), nb = number(b); c = na === nb ? 0 : na < nb ? -1 : 1; }
        else c = a.localeCompare(b, undefined, { numeric: true });
        return ascending ? c : -c;
      });
      for (const tr of sorted) body.appendChild(tr);
      for (const th of $$("th", table)) th.removeAttribute("aria-sort");
      button.closest("th").setAttribute("aria-sort", ascending ? "ascending" : "descending");
    });
  const dialog = get("task-view");
  const setHash = (hash) => { try { history.replaceState(null, "", hash || location.pathname + location.search); } catch (e) { /* a file: URL may refuse */ } };
  const open = (id) => {
    const template = get("tr-" + id);
    if (!template || !dialog || typeof dialog.showModal !== "function") return false;
    const tr = rows.find((r) => r.dataset.transcript === id);
    get("task-view-title").textContent = tr ? tr.dataset.title : "";
    get("task-view-body").replaceChildren(template.content.cloneNode(true));
    if (!dialog.open) dialog.showModal();
    get("task-view-body").scrollTop = 0;
    setHash("#task=" + id);
    return true;
  };
  table.addEventListener("click", (event) => {
    const tr = event.target.closest("tr[data-transcript]");
    if (!tr || !tr.dataset.transcript) return;
    const link = event.target.closest("a");
    // a modified click on the id opens the task's own page, as a link does
    if (link && (event.ctrlKey || event.metaKey || event.shiftKey || event.button === 1)) return;
    if (open(tr.dataset.transcript)) event.preventDefault();
  });
  if (dialog) {
    get("task-view-close").addEventListener("click", () => dialog.close());
    dialog.addEventListener("close", () => setHash(""));
  }
  const wanted = /^#task=(t[0-9]+)$/.exec(location.hash);
  if (wanted) open(wanted[1]);
  apply();
})();
`

/** The Content-Security-Policy hash of the script: the page runs this script and no other. */
export const EXPLORER_SCRIPT_HASH = `sha256-${createHash("sha256").update(EXPLORER_SCRIPT).digest("base64")}`
