//! The approval UI in real Chromium (Debian `chromium` + `chromium-driver`),
//! driven over WebDriver with fantoccini, against the real `portcullis serve`:
//! a refused `portcullis check --session …` appears live on the Requests page,
//! **Allow once** makes the grant, the retry is allowed once and then asked
//! again; revoking on the Grants page takes effect on the next decision.
//! Screenshots of every page land in `target/screenshots/`.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::support;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};
use support::serve::{Served, free_port, http};

const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
const CHROMIUM: &str = "/usr/bin/chromium";

struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn screenshots() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

async fn browser(profile: &std::path::Path) -> (Driver, Client) {
    browser_with(profile, &[]).await
}

/// [`browser`] with more Chromium arguments (`--force-dark-mode`).
async fn browser_with(profile: &std::path::Path, extra: &[&str]) -> (Driver, Client) {
    assert!(
        std::path::Path::new(CHROMEDRIVER).exists(),
        "{CHROMEDRIVER} is missing: apt-get install -y chromium chromium-driver (scripts/test does)"
    );
    let port = free_port();
    // Chromium writes crash-report settings and dconf files under the home
    // even with its own --user-data-dir: a throw-away home, never the developer's.
    let home = profile.join("home");
    let driver = Driver(
        Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("XDG_CACHE_HOME", home.join(".cache"))
            .env("XDG_DATA_HOME", home.join(".local/share"))
            .env("XDG_STATE_HOME", home.join(".local/state"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver"),
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    while http(
        port,
        "GET",
        "/status",
        &[("Host", &format!("127.0.0.1:{port}"))],
        None,
    )
    .0 != 200
    {
        assert!(Instant::now() < deadline, "chromedriver never answered");
        std::thread::sleep(Duration::from_millis(100));
    }
    let mut args = vec![
        "--headless=new".to_string(),
        "--no-sandbox".into(),
        "--disable-gpu".into(),
        "--disable-quic".into(),
        "--no-first-run".into(),
        "--disable-background-networking".into(),
        "--disable-component-update".into(),
        "--disable-sync".into(),
        "--disable-dev-shm-usage".into(),
        "--window-size=1280,800".into(),
        format!("--user-data-dir={}", profile.display()),
    ];
    args.extend(extra.iter().map(|a| a.to_string()));
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({"binary": CHROMIUM, "args": args}),
    );
    let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{port}"))
        .await
        .expect("a Chromium session");
    (driver, client)
}

async fn shot(c: &Client, name: &str) {
    let png = c.screenshot().await.expect("a screenshot");
    assert!(png.starts_with(b"\x89PNG"), "{name} is a PNG");
    std::fs::write(screenshots().join(format!("{name}.png")), png).unwrap();
}

async fn wait_for(c: &Client, css: &str) -> fantoccini::elements::Element {
    c.wait()
        .at_most(Duration::from_secs(20))
        .for_element(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css} never appeared: {e}"))
}

/// Waits until the page's notice says `what` (a click navigates: the old
/// page's notice must not count).
async fn notice(c: &Client, what: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(el) = c.find(Locator::Css("p.ok")).await
            && let Ok(t) = el.text().await
            && t.contains(what)
        {
            return t;
        }
        assert!(Instant::now() < deadline, "no notice saying {what:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn text(c: &Client, css: &str) -> String {
    c.find(Locator::Css(css))
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approve_in_chromium_then_revoke() {
    let s = Served::start();
    s.register("s1");
    let profile = tempfile::tempdir().unwrap();
    let (_driver, c) = browser(profile.path()).await;

    // The printed URL logs the browser in and lands on Requests.
    c.goto(&s.login_url).await.unwrap();
    wait_for(&c, "#requests").await;
    let url = c.current_url().await.unwrap();
    assert_eq!(url.path(), "/");
    assert!(
        !url.as_str().contains("token="),
        "the token leaves the address bar"
    );
    assert!(text(&c, "#requests").await.contains("No pending requests"));

    // A refusal elsewhere appears live (SSE), no reload.
    c.execute("window.__marker = 1;", vec![]).await.unwrap();
    let first = s.check_outside_read("s1");
    assert_eq!(first["decision"], "ask", "{first}");
    let id = first["request"]["id"].as_i64().unwrap();
    let card = wait_for(&c, &format!("#request-{id}")).await;
    let marker: Value = c.execute("return window.__marker;", vec![]).await.unwrap();
    assert_eq!(marker, json!(1), "the page was not reloaded");
    let card_text = card.text().await.unwrap();
    assert!(
        card_text.contains(&s.outside.display().to_string()),
        "{card_text}"
    );
    assert!(
        card_text.contains("claude-code") && card_text.contains("s1"),
        "{card_text}"
    );
    assert_eq!(text(&c, "#pending-count").await, "1");
    // The safest choice is the focused default.
    let focused: Value = c
        .execute(
            "return document.activeElement && document.activeElement.value;",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(focused, json!("deny"));
    // A read may be allowed on this device; repeats show a count, not copies.
    s.check_outside_read("s1");
    wait_for(&c, &format!("#request-{id} .repeat")).await;
    assert_eq!(
        c.find_all(Locator::Css("article.request"))
            .await
            .unwrap()
            .len(),
        1
    );
    c.find(Locator::Css(&format!("#request-{id} button[value=device]")))
        .await
        .expect("device button for a read");
    shot(&c, "requests").await;

    // Allow once: a grant; the retry is allowed once, then asked again.
    c.find(Locator::Css(&format!("#request-{id} button[value=once]")))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    notice(&c, &format!("Request #{id} allowed (once)")).await;
    let retry = s.check_outside_read("s1");
    assert_eq!(retry["decision"], "allow", "{retry}");
    let again = s.check_outside_read("s1");
    assert_eq!(again["decision"], "ask", "{again}");

    // Allow for the session, then revoke it on the Grants page.
    let id2 = again["request"]["id"].as_i64().unwrap();
    wait_for(&c, &format!("#request-{id2}")).await;
    c.find(Locator::Css(&format!(
        "#request-{id2} button[value=session]"
    )))
    .await
    .unwrap()
    .click()
    .await
    .unwrap();
    notice(&c, &format!("Request #{id2} allowed (session)")).await;
    assert_eq!(s.check_outside_read("s1")["decision"], "allow");
    c.find(Locator::LinkText("Grants"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let row = wait_for(&c, "table tbody tr").await;
    let row_text = row.text().await.unwrap();
    assert!(
        row_text.contains("session") && row_text.contains(&s.outside.display().to_string()),
        "{row_text}"
    );
    shot(&c, "grants").await;
    row.find(Locator::Css("button"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    notice(&c, "revoked").await;
    let after = s.check_outside_read("s1");
    assert_eq!(
        after["decision"], "ask",
        "revoked on the next decision: {after}"
    );

    // Audit: filterable, with the chain verified.
    c.goto(&format!(
        "http://127.0.0.1:{}/audit?session=s1&verdict=allow",
        s.port
    ))
    .await
    .unwrap();
    let verify = wait_for(&c, "#verify").await.text().await.unwrap();
    assert!(verify.contains("intact"), "{verify}");
    let rows = c
        .find_all(Locator::Css("table.audit tbody tr"))
        .await
        .unwrap();
    assert_eq!(rows.len(), 2, "two allowed decisions of s1");
    shot(&c, "audit").await;

    c.find(Locator::LinkText("Sessions"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let sessions = wait_for(&c, "table tbody").await.text().await.unwrap();
    assert!(
        sessions.contains("s1") && sessions.contains("claude-code"),
        "{sessions}"
    );
    shot(&c, "sessions").await;

    // A narrow window still works: the buttons stay reachable.
    c.set_window_size(420, 860).await.unwrap();
    c.goto(&format!("http://127.0.0.1:{}/", s.port))
        .await
        .unwrap();
    // (The live list may re-render meanwhile: look the button up afresh.)
    let mut displayed = false;
    for _ in 0..50 {
        let button = wait_for(&c, "article.request button[value=deny]").await;
        match button.is_displayed().await {
            Ok(d) => {
                displayed = d;
                break;
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    assert!(displayed);
    let overflow: Value = c
        .execute(
            "return document.documentElement.scrollWidth <= window.innerWidth + 1;",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(overflow, json!(true), "no horizontal scrolling at 420 px");
    shot(&c, "requests-narrow").await;

    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_without_the_login_sees_nothing() {
    let s = Served::start();
    s.register("s1");
    s.check_outside_read("s1");
    let profile = tempfile::tempdir().unwrap();
    let (_driver, c) = browser(profile.path()).await;
    c.goto(&format!("http://127.0.0.1:{}/", s.port))
        .await
        .unwrap();
    let body = wait_for(&c, "section.locked").await.text().await.unwrap();
    assert!(body.contains("login URL"), "{body}");
    let source = c.source().await.unwrap();
    assert!(
        !source.contains(&s.outside.display().to_string()),
        "no request leaks"
    );
    c.goto(&format!(
        "http://127.0.0.1:{}/login?token={}",
        s.port,
        "0".repeat(64)
    ))
    .await
    .unwrap();
    wait_for(&c, "section.locked").await;
    shot(&c, "locked").await;
    c.close().await.unwrap();
}

/// The list holds still (issue 16): with 40 pending requests, a request that
/// arrives between `mousedown` and `click` on a card deep in the list moves
/// nothing — what is under the pointer at the click is the card pressed, and
/// that is the request resolved — and resolving it keeps the scroll position
/// within a pixel. The newcomer waits behind the "N new" bar.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_list_holds_still_under_the_pointer() {
    let s = Served::start();
    let mut ids = Vec::new();
    for i in 0..40 {
        let session = format!("m{i}");
        s.register(&session);
        let asked = s.check_outside_read(&session);
        ids.push(asked["request"]["id"].as_i64().expect("a request"));
    }
    let profile = tempfile::tempdir().unwrap();
    let (_driver, c) = browser(profile.path()).await;
    c.goto(&s.login_url).await.unwrap();
    wait_for(&c, "#requests").await;
    // Let the stream connect (its first refresh finds nothing new).
    tokio::time::sleep(Duration::from_millis(500)).await;
    let target = ids[5];
    let pressed: Value = c
        .execute(
            &format!(
                "const b = document.querySelector('#request-{target} button[value=once]');
                 b.scrollIntoView({{block: 'center'}});
                 const r = b.getBoundingClientRect();
                 const x = r.left + r.width / 2, y = r.top + r.height / 2;
                 const under = document.elementFromPoint(x, y);
                 under.dispatchEvent(new MouseEvent('mousedown', {{bubbles: true, clientX: x, clientY: y}}));
                 return {{x: x, y: y, scroll: window.scrollY, card: under.closest('article').id}};"
            ),
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(pressed["card"], format!("request-{target}"), "{pressed}");
    assert!(
        pressed["scroll"].as_f64().unwrap() > 100.0,
        "deep in the list: {pressed}"
    );

    // A new request arrives over SSE while the button is held down.
    s.register("late");
    let late = s.check_outside_read("late")["request"]["id"]
        .as_i64()
        .unwrap();
    wait_for(&c, "#new-requests:not([hidden])").await;

    let clicked: Value = c
        .execute(
            &format!(
                "const under = document.elementFromPoint({x}, {y});
                 const card = under.closest('article').id;
                 under.click();
                 return card;",
                x = pressed["x"],
                y = pressed["y"]
            ),
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        clicked,
        json!(format!("request-{target}")),
        "the click lands on the card pressed"
    );
    notice(&c, &format!("Request #{target} allowed (once)")).await;
    let scroll: Value = c.execute("return window.scrollY;", vec![]).await.unwrap();
    assert!(
        (scroll.as_f64().unwrap() - pressed["scroll"].as_f64().unwrap()).abs() <= 1.0,
        "the scroll position holds: {scroll} vs {pressed}"
    );
    let auth = s.bearer();
    let (_, _, body) = s.request("GET", "/v1/requests", &[("Authorization", &auth)], None);
    let pending: Vec<i64> = serde_json::from_str::<Value>(&body)
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["id"].as_i64())
        .collect();
    assert!(!pending.contains(&target), "{target} was resolved");
    assert!(pending.contains(&late), "the newcomer waits for the person");
    assert_eq!(pending.len(), 40, "only the pressed card was resolved");
    // The bar shows the newcomer on request.
    c.find(Locator::Css("#new-requests"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_for(&c, &format!("#request-{late}")).await;
    shot(&c, "requests-holding-still").await;

    // The keyboard: j moves to the next card, d denies the focused one.
    let cards: Value = c
        .execute(
            "return Array.from(document.querySelectorAll('#requests article')).map(a => a.id);",
            vec![],
        )
        .await
        .unwrap();
    let cards: Vec<String> = serde_json::from_value(cards).unwrap();
    c.execute(
        "document.querySelector('#requests article button.deny').focus();",
        vec![],
    )
    .await
    .unwrap();
    c.active_element()
        .await
        .unwrap()
        .send_keys("j")
        .await
        .unwrap();
    let focused: Value = c
        .execute(
            "return document.activeElement.closest('article').id;",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(focused, json!(cards[1]), "j moves to the next card");
    c.active_element()
        .await
        .unwrap()
        .send_keys("d")
        .await
        .unwrap();
    let denied: i64 = cards[1].trim_start_matches("request-").parse().unwrap();
    notice(&c, &format!("Request #{denied} denied")).await;
    c.active_element()
        .await
        .unwrap()
        .send_keys("?")
        .await
        .unwrap();
    wait_for(&c, "#shortcuts:not([hidden])").await;

    // Filter to one session's card, deny all shown: only it goes.
    let (_, _, body) = s.request("GET", "/v1/requests", &[("Authorization", &auth)], None);
    let before = serde_json::from_str::<Value>(&body)
        .unwrap()
        .as_array()
        .unwrap()
        .len();
    c.find(Locator::Css("#request-search"))
        .await
        .unwrap()
        .send_keys("m17")
        .await
        .unwrap();
    let shown: Value = c
        .execute(
            "return Array.from(document.querySelectorAll('#requests article.request')).filter(a => !a.hidden).map(a => a.dataset.session);",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(shown, json!(["m17"]), "the filter shows the matching card");
    c.execute(
        "document.querySelector('#request-compact').click();",
        vec![],
    )
    .await
    .unwrap();
    shot(&c, "requests-filtered-compact").await;
    c.find(Locator::Css("#deny-shown"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    notice(&c, "1 request denied").await;
    let (_, _, body) = s.request("GET", "/v1/requests", &[("Authorization", &auth)], None);
    let after = serde_json::from_str::<Value>(&body).unwrap();
    let after = after.as_array().unwrap();
    assert_eq!(after.len(), before - 1, "only the card shown was denied");
    assert!(after.iter().all(|r| r["session"] != "m17"));
}

/// axe-core (`e2e/node_modules/axe-core`, `npm ci --prefix e2e`): its
/// WCAG 2.x A and AA rules run on the page the browser shows; the violations,
/// a line each (rule, impact, the elements and why).
async fn axe_violations(c: &Client) -> Vec<String> {
    let axe = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../e2e/node_modules/axe-core/axe.min.js");
    let source = std::fs::read_to_string(&axe)
        .unwrap_or_else(|e| panic!("{}: {e} (npm ci --prefix e2e)", axe.display()));
    c.execute(&source, vec![]).await.expect("axe-core loads");
    let found = c
        .execute_async(
            "const done = arguments[arguments.length - 1];
             axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']}})
               .then(r => done(r.violations.map(v => v.id + ' (' + v.impact + '): ' +
                   v.nodes.map(n => n.target.join(' ') + ' — ' + n.failureSummary).join(' | '))))
               .catch(e => done(['axe failed: ' + e]));",
            vec![],
        )
        .await
        .expect("axe.run answers");
    serde_json::from_value(found).expect("a list of violations")
}

/// Every page — Requests (a compound call and a plain read pending),
/// Grants, Sessions, Audit, and the page a browser without the login gets —
/// passes axe-core's WCAG 2.1 A/AA rules (contrast included) in the light
/// and the dark theme; the screenshots of each land in `target/screenshots/`
/// (the README's come from there).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_page_passes_axe_in_both_themes() {
    let s = Served::start();
    s.register("s1");
    let compound =
        json!({"command": "rm -rf node_modules && git push --force origin main"}).to_string();
    s.cli_json(&[
        "check",
        "--session",
        "s1",
        "--tool",
        "Bash",
        "--origin",
        "core",
        "--input",
        &compound,
    ]);
    let first = s.check_outside_read("s1");
    assert_eq!(first["decision"], "ask", "{first}");
    // One request resolved for the session: a grant to list.
    let listed = s.cli_json(&["requests", "list", "--json"]);
    let read = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r.to_string().contains("notes.txt"))
        .unwrap_or_else(|| panic!("no request for the read: {listed}"))["id"]
        .to_string();
    s.cli_json(&["requests", "resolve", &read, "--scope", "session", "--json"]);
    s.check_outside_read("s1");

    for (theme, extra) in [("light", &[][..]), ("dark", &["--force-dark-mode"][..])] {
        let profile = tempfile::tempdir().unwrap();
        let (_driver, c) = browser_with(profile.path(), extra).await;
        // Logged out first: the page a stranger gets.
        c.goto(&format!("http://127.0.0.1:{}/", s.port))
            .await
            .unwrap();
        let dark: Value = c
            .execute(
                "return matchMedia('(prefers-color-scheme: dark)').matches;",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(
            dark,
            json!(theme == "dark"),
            "the {theme} theme is not the one shown"
        );
        let mut failures = Vec::new();
        let found = axe_violations(&c).await;
        if !found.is_empty() {
            failures.push(format!("locked page, {theme}: {found:#?}"));
        }
        shot(&c, &format!("locked-{theme}")).await;
        c.goto(&s.login_url).await.unwrap();
        wait_for(&c, "#requests").await;
        for (page, path, ready) in [
            ("requests", "/", "#requests"),
            ("grants", "/grants", "nav.top"),
            ("sessions", "/sessions", "nav.top"),
            ("audit", "/audit", "nav.top"),
        ] {
            c.goto(&format!("http://127.0.0.1:{}{path}", s.port))
                .await
                .unwrap();
            wait_for(&c, ready).await;
            let found = axe_violations(&c).await;
            if !found.is_empty() {
                failures.push(format!("{page}, {theme}: {found:#?}"));
            }
            // The page from its top (the focused card may have scrolled it).
            c.execute("window.scrollTo(0, 0);", vec![]).await.unwrap();
            shot(&c, &format!("{page}-{theme}")).await;
        }
        assert!(
            failures.is_empty(),
            "axe-core found violations:\n{}",
            failures.join("\n")
        );
    }
}
