// Live board page: reads the page model from server-sent events and writes it with textContent only.
// No inline script runs (the CSP forbids it); hostile names are displayed as text, never as markup.
"use strict";
(() => {
  const base = location.pathname.replace(/\/[^/]*$/, "/");
  let model = null;
  let offset = 0; // server clock minus this page's clock, in seconds
  let source = null;
  let retryTimer = null;
  let retryDelay = 1000;

  const $ = (sel, root = document) => root.querySelector(sel);
  const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));
  const setText = (el, text) => { if (el && el.textContent !== text) el.textContent = text; };

  function fmtClock(seconds) {
    if (seconds === null || seconds === undefined) return "--:--";
    const s = Math.max(0, Math.round(seconds));
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
    const mm = String(m).padStart(2, "0"), ss = String(r).padStart(2, "0");
    return h ? `${h}:${mm}:${ss}` : `${mm}:${ss}`;
  }

  function remaining(player) {
    if (player.clock_s === null) return null;
    if (!player.clock_running) return player.clock_s;
    const elapsed = (Date.now() / 1000 + offset) - model.as_of;
    return player.clock_s - Math.max(0, elapsed);
  }

  function renderClocks() {
    if (!model) return;
    model.players.slice(0, 2).forEach((p, i) => {
      const el = $(`#clocks .p${i}`);
      const left = remaining(p);
      setText($(".name", el), p.name);
      setText($(".time", el), fmtClock(left));
      el.classList.toggle("running", p.clock_running);
      el.classList.toggle("out", left !== null && left <= 0);
    });
  }

  function render() {
    const m = model;
    document.body.dataset.status = m.status;
    m.players.slice(0, 2).forEach((p, i) => {
      const el = $(`#scoreboard .p${i}`);
      setText($(".name", el), p.name);
      setText($(".faction", el), p.faction);
      setText($(".cp-value", el), String(p.cp));
      setText($(".vp-value", el), String(p.vp));
      el.classList.toggle("active", p.id === m.active_id);
    });
    const roundText = m.status !== "active" ? `Game ${m.status}`
      : m.phase === "Battle over" ? "Battle over" : `Round ${m.round} · ${m.active} · ${m.phase}`;
    setText($("#scoreboard .round-short"), m.status === "active" ? `Round ${m.round}` : `Game ${m.status}`);
    setText($("#scoreboard .mission-name"), m.mission ? m.mission.name : "");
    setText($("#round .round-line"), roundText);
    const missionBits = m.mission ? [m.mission.name, m.mission.deployment].filter(Boolean) : [];
    setText($("#round .mission-line"), missionBits.join(" · "));
    renderBanner(m);
    const list = $("#log ol");
    const lines = m.log.map((e) => e.text);
    const shown = $$("li", list).map((li) => li.textContent);
    if (shown.join("\n") !== lines.join("\n")) {
      list.replaceChildren(...lines.map((t) => { const li = document.createElement("li"); li.textContent = t; return li; }));
    }
    renderClocks();
  }

  function renderBanner(m) {
    const head = $("#banner thead tr");
    const cells = ["", "", ...m.rounds.map((r) => `R${r.round}`), "Total"];
    head.replaceChildren(...cells.map((t) => { const th = document.createElement("th"); th.textContent = t; return th; }));
    const rows = [];
    for (const p of m.players.slice(0, 2)) {
      const kinds = [["primary", "Pri"], ["secondary", "Sec"]];
      if (m.players.some((q) => q.other !== 0)) kinds.push(["other", "Other"]);
      for (const [n, [key, label]] of kinds.entries()) {
        const tr = document.createElement("tr");
        tr.dataset.player = p.id; tr.dataset.kind = key;
        const perRound = m.rounds.map((r) => (key === "other" && !r.scores[p.id][key] ? "" : String(r.scores[p.id][key])));
        const values = [n === 0 ? p.name : "", label, ...perRound, String(p[key])];
        tr.replaceChildren(...values.map((t) => { const td = document.createElement("td"); td.textContent = t; return td; }));
        rows.push(tr);
      }
    }
    $("#banner tbody").replaceChildren(...rows);
  }

  function onState(event) {
    const message = JSON.parse(event.data);
    offset = message.now - Date.now() / 1000;
    model = message.state;
    setText($("#status"), "");
    document.body.dataset.seq = String(model.seq);
    render();
  }

  // The link was revoked (or its game is gone): show nothing from now on, and stop asking.
  function onRevoked() {
    clearTimeout(retryTimer);
    clearInterval(clockTimer);
    source.close();
    model = null;
    document.body.dataset.connected = "no";
    document.body.dataset.revoked = "yes";
    $("#overlay").replaceChildren();
  }

  function retryLater() {
    clearTimeout(retryTimer);
    retryTimer = setTimeout(connect, retryDelay);
    retryDelay = Math.min(retryDelay * 2, 30000);
  }

  function connect() {
    clearTimeout(retryTimer);
    if (source) source.close();
    source = new EventSource(base + "events");
    source.addEventListener("state", onState);
    source.addEventListener("revoked", onRevoked);
    source.addEventListener("open", () => {
      retryDelay = 1000;
      document.body.dataset.connected = "yes";
      setText($("#status"), "");
    });
    source.addEventListener("error", () => {
      if (document.body.dataset.revoked) return;
      document.body.dataset.connected = "no";
      setText($("#status"), "reconnecting…");
      // EventSource retries by itself while CONNECTING; after a hard failure (a non-200 answer) it gives
      // up. A 404 means the link was revoked (or its game removed) while we were away: show nothing.
      // Otherwise (e.g. the bot restarting answered 5xx) start again ourselves, backing off to 30 s.
      if (source.readyState === EventSource.CLOSED) {
        fetch(base + "state", { cache: "no-store" })
          .then((answer) => (answer.status === 404 ? onRevoked() : retryLater()), retryLater);
      }
    });
  }

  const clockTimer = setInterval(renderClocks, 250);
  connect();
})();
