// portcullis approval UI: live updates over Server-Sent Events, desktop
// notifications, keyboard shortcuts. Plain JavaScript, no build step.
"use strict";
(function () {
  const page = document.body.dataset.page;
  const list = document.getElementById("requests");
  const count = document.getElementById("pending-count");
  const notifyButton = document.getElementById("notify");
  const baseTitle = document.title.replace(/^\(\d+\) /, "");

  function setCount(n) {
    if (count) count.textContent = String(n);
    document.title = n > 0 ? "(" + n + ") " + baseTitle : baseTitle;
  }

  async function refreshRequests(newId) {
    if (!list) return;
    const focusedId = document.activeElement && document.activeElement.closest("article")
      ? document.activeElement.closest("article").dataset.id : null;
    const res = await fetch("/fragments/requests", { credentials: "same-origin" });
    if (!res.ok) return;
    const html = await res.text();
    setCount(Number(res.headers.get("x-pending-count") || "0"));
    const version = res.headers.get("x-fragment-version");
    if (version && version === list.dataset.version) return; // nothing changed
    list.dataset.version = version || "";
    list.innerHTML = html;
    if (newId) {
      const el = document.getElementById("request-" + newId);
      if (el) el.classList.add("fresh");
    }
    // Keep the keyboard where it was; else the safest choice of the first request.
    const keep = focusedId && document.querySelector("#request-" + focusedId + " button.deny");
    const first = list.querySelector("button.deny");
    const target = keep || (document.activeElement === document.body ? first : null);
    if (target) target.focus();
  }

  function notify(request) {
    if (!("Notification" in window) || Notification.permission !== "granted") return;
    const target = request.target.call || request.target.pattern || request.target.canonical || request.target.name || "";
    const n = new Notification("portcullis: " + request.op + " needs you", {
      body: request.tool + " " + target + "\n" + request.reason,
      tag: "portcullis-request-" + request.id,
    });
    n.onclick = function () { window.focus(); location.href = "/#request-" + request.id; };
  }

  if (notifyButton && "Notification" in window && Notification.permission === "default") {
    notifyButton.hidden = false;
    notifyButton.addEventListener("click", function () {
      Notification.requestPermission().then(function () { notifyButton.hidden = true; });
    });
  }

  const events = new EventSource("/v1/events");
  // (Re)connected: whatever happened while the stream was not open is only
  // in the store, so reload the list once.
  events.addEventListener("open", function () { if (page === "requests") refreshRequests(null); });
  events.addEventListener("request-new", function (e) {
    const r = JSON.parse(e.data);
    if (page === "requests") refreshRequests(r.id);
    notify(r);
  });
  events.addEventListener("pin-pending", function (e) {
    const p = JSON.parse(e.data);
    if (page === "requests") refreshRequests(null);
    if ("Notification" in window && Notification.permission === "granted") {
      new Notification("portcullis: mcp__" + p.server + "__" + p.tool + " changed", {
        body: "Withheld until you approve its new definition.",
        tag: "portcullis-pin-" + p.hash,
      });
    }
  });
  for (const kind of ["request-updated", "request-resolved", "pin-decided", "resync"]) {
    events.addEventListener(kind, function () { if (page === "requests") refreshRequests(null); });
  }
  for (const kind of ["grant-added", "grant-ended"]) {
    events.addEventListener(kind, function () {
      const status = document.getElementById("live-status");
      if (page === "grants" && status) status.hidden = false;
    });
  }
  window.__portcullisEvents = events;

  // Held calls: count down to the deadline the hook or bridge stored.
  function tick() {
    const now = Date.now() / 1000;
    for (const el of document.querySelectorAll(".held.waiting[data-until]")) {
      const left = Math.floor(Number(el.dataset.until) - now);
      const out = el.querySelector(".countdown");
      if (left > 0) {
        if (out) out.textContent = " (" + left + " s left)";
      } else {
        el.classList.remove("waiting");
        el.classList.add("gone");
        el.textContent = "The agent stopped waiting: an approval applies when it retries the call.";
      }
    }
  }
  tick();
  setInterval(tick, 1000);

  // Keyboard: g r / g g / g a / g s move between pages.
  let pending = null;
  document.addEventListener("keydown", function (e) {
    if (e.target.matches("input, select, textarea") || e.metaKey || e.ctrlKey || e.altKey) return;
    if (pending === "g") {
      const to = { r: "/", g: "/grants", a: "/audit", s: "/sessions" }[e.key];
      pending = null;
      if (to) { location.href = to; e.preventDefault(); }
      return;
    }
    if (e.key === "g") pending = "g";
  });
})();
