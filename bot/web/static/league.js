// League table page: polls its state every few seconds and writes it with textContent only (no markup from
// data, no inline script: the CSP forbids it). A revoked link answers 404: the page then clears itself.
"use strict";
(() => {
  const base = location.pathname.replace(/\/[^/]*$/, "/");
  const POLL_MS = 3000;
  const $ = (sel) => document.querySelector(sel);
  const cell = (text) => { const td = document.createElement("td"); td.textContent = text; return td; };

  function render(m) {
    document.body.dataset.seq = String(m.seq);
    $("#title").textContent = m.league + (m.status === "closed" ? " (final)" : "");
    const rows = m.players.map((p) => {
      const tr = document.createElement("tr");
      tr.append(cell(String(p.rank)), cell(p.name), cell(p.factions.join(", ") || "\u2013"), cell(String(p.games)),
        cell(`${p.wins}-${p.draws}-${p.losses}`), cell(`${p.vp_for}/${p.vp_against}`), cell(String(Math.round(p.rating))));
      return tr;
    });
    $("tbody").replaceChildren(...rows);
    $("#status").textContent = m.total > m.players.length ? `Top ${m.players.length} of ${m.total} players` : "";
  }

  async function poll() {
    try {
      const response = await fetch(base + "state", { cache: "no-store", credentials: "omit" });
      if (response.status === 404) {  // revoked, or the league is gone: show nothing, stop asking
        document.body.dataset.gone = "1";
        $("tbody").replaceChildren();
        $("#title").textContent = "";
        return;
      }
      if (response.ok) render(await response.json());
    } catch (error) {
      // the bot restarts or the network drops: keep the last table and try again
    }
    setTimeout(poll, POLL_MS);
  }
  poll();
})();
