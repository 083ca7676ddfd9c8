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

  // The list holds still (issue 16): a card arriving never moves what is
  // under the pointer. New cards wait behind the "N new" bar until the person
  // asks for them (or the list is empty); cards resolved elsewhere leave with
  // the scroll position kept on what was in view; a card's content is
  // updated in place unless the person is working in it.
  const waiting = new Map(); // id -> element not yet shown
  let newBar = null;

  function showNewBar() {
    if (!list) return;
    if (!newBar) {
      newBar = document.createElement("button");
      newBar.type = "button";
      newBar.id = "new-requests";
      newBar.className = "new-bar";
      newBar.addEventListener("click", revealWaiting);
      document.body.appendChild(newBar);
    }
    const n = waiting.size;
    newBar.hidden = n === 0;
    newBar.textContent = n === 1 ? "1 new request — show" : n + " new requests — show";
  }

  function revealWaiting() {
    const cards = Array.from(waiting.values()).sort(function (a, b) {
      return Number(b.dataset.id || 0) - Number(a.dataset.id || 0);
    });
    waiting.clear();
    for (const el of cards.reverse()) {
      el.classList.add("fresh");
      list.insertBefore(el, list.firstChild);
    }
    for (const el of Array.from(list.children)) if (!el.id) el.remove();
    showNewBar();
    applyView();
    list.scrollIntoView({ block: "start" });
    const first = list.querySelector("button.deny");
    if (first) first.focus();
  }

  // The first card at least partly in view, and where it is: the anchor the
  // scroll position is kept on while cards above it come and go.
  function anchor() {
    for (const el of list.children) {
      const top = el.getBoundingClientRect().bottom;
      if (top > 0) return { el: el, top: el.getBoundingClientRect().top };
    }
    return null;
  }

  function busy(card) {
    if (card.contains(document.activeElement) && document.activeElement.matches("input, textarea")) return true;
    for (const input of card.querySelectorAll("input[type=text], input[type=checkbox]")) {
      if ((input.type === "checkbox" && input.checked) || (input.type === "text" && input.value)) return true;
    }
    return false;
  }

  async function refreshRequests(newId) {
    if (!list) return;
    const res = await fetch("/fragments/requests", { credentials: "same-origin" });
    if (!res.ok) return;
    const html = await res.text();
    setCount(Number(res.headers.get("x-pending-count") || "0"));
    const version = res.headers.get("x-fragment-version");
    if (version && version === list.dataset.version) return; // nothing changed
    list.dataset.version = version || "";
    const tpl = document.createElement("template");
    tpl.innerHTML = html;
    const incoming = Array.from(tpl.content.children);
    const ids = new Set(incoming.map(function (el) { return el.id; }).filter(Boolean));
    const keep = anchor();
    const focused = document.activeElement;
    for (const el of Array.from(list.children)) {
      if (!el.id || !ids.has(el.id)) {
        if (keep && keep.el === el) keep.el = el.nextElementSibling;
        el.remove();
      }
    }
    for (const id of Array.from(waiting.keys())) if (!ids.has(id)) waiting.delete(id);
    const empty = !list.querySelector("article");
    for (const el of incoming) {
      const current = el.id ? document.getElementById(el.id) : null;
      if (current && list.contains(current)) {
        if (current.innerHTML !== el.innerHTML && !busy(current)) current.innerHTML = el.innerHTML;
      } else if (!el.id) {
        if (empty && !list.querySelector("article")) list.appendChild(el);
      } else if (empty) {
        list.appendChild(el);
        if (newId && el.id === "request-" + newId) el.classList.add("fresh");
      } else {
        waiting.set(el.id, el);
      }
    }
    if (keep && keep.el && list.contains(keep.el)) {
      window.scrollBy(0, keep.el.getBoundingClientRect().top - keep.top);
    }
    if (focused && document.body.contains(focused)) focused.focus({ preventScroll: true });
    else if (document.activeElement === document.body) {
      const first = list.querySelector("button.deny");
      if (first) first.focus({ preventScroll: true });
    }
    showNewBar();
    if (typeof applyView === "function") applyView();
  }

  // Finding one's way in a long list: a filter, a compact view, an order
  // by session or directory, and denying every card shown at once. The
  // filter and order are applied again whenever the list is refreshed.
  const search = document.getElementById("request-search");
  const compact = document.getElementById("request-compact");
  const group = document.getElementById("request-group");
  const denyShown = document.getElementById("deny-shown");

  function shownCards() {
    return list ? Array.from(list.querySelectorAll("article.request")).filter(function (c) { return !c.hidden; }) : [];
  }

  function applyView() {
    if (!list) return;
    const needle = search ? search.value.trim().toLowerCase() : "";
    for (const card of list.querySelectorAll("article.request")) {
      card.hidden = needle !== "" && !card.textContent.toLowerCase().includes(needle);
    }
    list.classList.toggle("compact", !!(compact && compact.checked));
    const key = group ? group.value : "";
    const cards = Array.from(list.querySelectorAll("article.request"));
    cards.sort(function (a, b) {
      const ka = key ? (a.dataset[key] || "") : "";
      const kb = key ? (b.dataset[key] || "") : "";
      if (ka !== kb) return ka < kb ? -1 : 1;
      return Number(b.dataset.id || 0) - Number(a.dataset.id || 0);
    });
    // Move cards only when the order changes: moving a node loses the
    // browser's scroll anchor (the list must hold still).
    const current = Array.from(list.querySelectorAll("article.request"));
    if (cards.some(function (c, i) { return c !== current[i]; })) {
      for (const c of cards) list.appendChild(c);
    }
    if (denyShown) {
      const n = shownCards().length;
      denyShown.textContent = n === 1 ? "Deny the 1 shown" : "Deny all " + n + " shown";
      denyShown.disabled = n === 0;
    }
  }

  if (search) search.addEventListener("input", applyView);
  if (compact) compact.addEventListener("change", applyView);
  if (group) group.addEventListener("change", applyView);
  if (denyShown) denyShown.addEventListener("click", async function () {
    const cards = shownCards();
    let denied = 0;
    for (const card of cards) {
      const form = card.querySelector("form.actions");
      if (!form) continue;
      const data = new URLSearchParams(new FormData(form));
      data.set("scope", "deny");
      data.delete("rule");
      data.delete("save");
      const res = await fetch(form.action, { method: "POST", body: data, credentials: "same-origin" });
      if (res.ok && !new URL(res.url, location.href).searchParams.get("error")) {
        card.remove();
        denied += 1;
      }
    }
    notice.className = "ok toast";
    notice.textContent = denied + " request" + (denied === 1 ? "" : "s") + " denied.";
    notice.hidden = false;
    refreshRequests(null);
  });
  applyView();

  // Resolving a card goes through fetch: the page does not reload, the card
  // leaves in place, the scroll position stays.
  const notice = document.createElement("p");
  notice.setAttribute("role", "status");
  notice.hidden = true;
  if (list) list.parentNode.insertBefore(notice, list);
  document.addEventListener("submit", async function (e) {
    const form = e.target;
    if (!list || !form.matches("#requests form.actions")) return;
    e.preventDefault();
    const data = new URLSearchParams(new FormData(form));
    if (e.submitter && e.submitter.name) data.append(e.submitter.name, e.submitter.value);
    const card = form.closest("article");
    let res;
    try {
      res = await fetch(form.action, { method: "POST", body: data, credentials: "same-origin" });
    } catch (err) {
      notice.className = "error toast"; notice.textContent = "Not sent: " + err; notice.hidden = false;
      return;
    }
    const params = new URL(res.url, location.href).searchParams;
    const error = params.get("error") || (res.ok ? null : "The server answered " + res.status + ".");
    // A toast: it takes no room in the page, so nothing moves when it shows.
    notice.className = error ? "error toast" : "ok toast";
    notice.textContent = error || params.get("notice") || "Done.";
    notice.hidden = false;
    if (!error && card) {
      const next = card.nextElementSibling || card.previousElementSibling;
      const y = window.scrollY;
      card.remove();
      window.scrollTo(0, y);
      const button = next && next.querySelector ? next.querySelector("button.deny") : null;
      if (button) button.focus({ preventScroll: true });
    }
    refreshRequests(null);
  });

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

  // Keyboard: g r / g g / g a / g s move between pages; on Requests, j / k
  // move between cards, a / s / d allow once / for the session / deny the
  // focused card; ? shows the list.
  const help = document.createElement("div");
  help.id = "shortcuts";
  help.setAttribute("role", "dialog");
  help.setAttribute("aria-label", "Keyboard shortcuts");
  help.hidden = true;
  help.innerHTML = "<strong>Keyboard</strong><br><kbd>j</kbd> / <kbd>k</kbd> next / previous request · " +
    "<kbd>a</kbd> allow once · <kbd>s</kbd> allow for this session · <kbd>d</kbd> deny · " +
    "<kbd>g</kbd> then <kbd>r</kbd> <kbd>g</kbd> <kbd>a</kbd> <kbd>s</kbd>: Requests, Grants, Audit, Sessions · " +
    "<kbd>?</kbd> this list";
  document.body.appendChild(help);

  function focusedCard() {
    const el = document.activeElement;
    return el && el.closest ? el.closest("#requests article") : null;
  }

  function moveFocus(step) {
    if (!list) return;
    const cards = Array.from(list.querySelectorAll("article"));
    if (cards.length === 0) return;
    const at = cards.indexOf(focusedCard());
    const next = cards[Math.min(cards.length - 1, Math.max(0, at < 0 ? 0 : at + step))];
    const button = next.querySelector("button.deny") || next.querySelector("button");
    if (button) {
      button.focus({ preventScroll: true });
      next.scrollIntoView({ block: "nearest" });
    }
  }

  let pending = null;
  document.addEventListener("keydown", function (e) {
    if (e.target.matches("input, select, textarea") || e.metaKey || e.ctrlKey || e.altKey) return;
    if (pending === "g") {
      const to = { r: "/", g: "/grants", a: "/audit", s: "/sessions" }[e.key];
      pending = null;
      if (to) { location.href = to; e.preventDefault(); }
      return;
    }
    if (e.key === "g") { pending = "g"; return; }
    if (e.key === "?") { help.hidden = !help.hidden; e.preventDefault(); return; }
    if (e.key === "Escape") { help.hidden = true; return; }
    if (e.key === "j") { moveFocus(1); e.preventDefault(); return; }
    if (e.key === "k") { moveFocus(-1); e.preventDefault(); return; }
    const scope = { a: "once", s: "session", d: "deny" }[e.key];
    const card = focusedCard();
    if (scope && card) {
      const button = card.querySelector("button[value=" + scope + "]");
      if (button) { button.click(); e.preventDefault(); }
    }
  });
  // Visible focus on load: the first card's safest choice.
  if (list && document.activeElement === document.body) {
    const first = list.querySelector("button.deny");
    if (first) first.focus({ preventScroll: true });
  }
})();
