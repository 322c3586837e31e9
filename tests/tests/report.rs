//! Every run writes `report.html`: a self-contained page whose plots render in a real
//! headless browser without errors, and no wider than the window. Without a browser the
//! test checks the page's text only and prints a `SKIPPED` line that `cargo test` shows;
//! where `NEARDUP_REQUIRE_BROWSER` is set (CI), a missing browser fails the test.

use std::path::Path;
use std::process::Command;

use neardup_e2e::{dedup, repo};

/// The headless browser, if installed.
fn browser() -> Option<&'static str> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|name| Command::new(name).arg("--version").output().is_ok_and(|o| o.status.success()))
}

/// The `<body ...>` tag of the page after the browser has loaded it and run its scripts.
fn rendered_body(browser: &str, page: &Path) -> String {
    let profile = tempfile::tempdir().unwrap();
    let output = Command::new(browser)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=5000"])
        .arg("--window-size=1024,768")
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("run the browser");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let dom = String::from_utf8(output.stdout).unwrap();
    let start = dom.find("<body").expect("a body");
    dom[start..start + dom[start..].find('>').unwrap() + 1].to_string()
}

#[test]
fn the_report_is_self_contained_and_renders() {
    let browser = browser();
    if browser.is_none() {
        neardup_testkit::skip(
            "no headless browser found (apt-get install chromium): the page's text was checked, \
             not its rendering",
            "NEARDUP_REQUIRE_BROWSER",
        );
    }
    let dir = tempfile::tempdir().unwrap();
    for (name, args) in
        [("minhash", &["--method", "minhash"][..]), ("simhash", &["--method", "simhash"][..])]
    {
        let out = dir.path().join(name);
        dedup(&repo().join("data-samples"), &out, args).unwrap();
        let page = out.join("report.html");
        let html = std::fs::read_to_string(&page).unwrap();
        for external in ["<link", "<img", "<script src", "@import", "url("] {
            assert!(!html.contains(external), "{name}: the page loads nothing ({external})");
        }
        // The bundled samples reject no record: no empty "rejected" panel.
        assert!(!html.contains("Rejected records by reason"), "{name}: an empty panel");
        assert_eq!(html.matches("<svg class=\"plot\"").count(), 3, "{name}: three plots");
        assert!(html.contains("Largest clusters") && html.contains("kept: "), "{name}");
        // The page's own sentences are written with one space between words.
        let learned = html.split("<p>Boilerplate: ").nth(1).expect("web pages learn");
        let learned = learned.split("</p>").next().unwrap();
        assert!(!learned.contains("  "), "{name}: runs of spaces: {learned}");
        // Every quoted document has its excerpt, read again from the inputs.
        let quoted = html.matches("</code><div class=ex>").count();
        assert!(quoted >= 2, "{name}: {quoted} documents quoted");
        assert!(!html.contains("</code><div class=ex></div>"), "{name}: an excerpt is missing");
        // Quoted as compared: the bundled court pages' navigation bar, a template line the
        // run learns, is in no excerpt (the raw pages begin with it).
        let excerpts: Vec<&str> = html
            .split("<div class=ex>")
            .skip(1)
            .map(|e| e.split("</div>").next().unwrap_or(e))
            .collect();
        assert!(
            excerpts.iter().all(|e| !e.contains("登录 | 注册")),
            "{name}: a template line quoted"
        );
        // ... it is listed under the page, with the page's other left-out lines.
        assert!(html.contains("<div class=lo>left out ("), "{name}: no left-out lines");
        let left: Vec<&str> = html.split("<div class=lo>").skip(1).collect();
        assert!(left.iter().any(|l| l.contains("登录 | 注册")), "{name}: the nav bar not listed");
        // Each removed member is compared with its kept document.
        assert!(html.contains("<div class=vs>feature Jaccard with the kept document"), "{name}");
        assert!(html.contains("the texts part at character"), "{name}");
        // The least similar pairs, each quoted and compared.
        let least = html.split("<h2>Least similar pairs</h2>").nth(1).expect("the section");
        assert!(least.contains("feature Jaccard with the first document"), "{name}");
        if let Some(browser) = browser {
            let body = rendered_body(browser, &page);
            assert!(!body.contains("data-error"), "{name}: script error: {body}");
            assert!(
                body.contains("data-plots=\"3\"") && body.contains("data-rendered=\"3\""),
                "{name}: not every plot rendered: {body}"
            );
            // Nothing (the settings, a long id) is wider than a 1024-pixel window.
            assert!(body.contains("data-wide=\"false\""), "{name}: scrolls sideways: {body}");
        }
    }
}

/// The panel of rejected records is shown when some were rejected, by reason.
#[test]
fn rejected_records_have_their_panel_only_when_there_are_some() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    let poem = "床前明月光，疑是地上霜。举头望明月，低头思故乡。";
    let lines = [
        format!("{{\"id\":\"a\",\"text\":\"{poem}\"}}"),
        "not json".to_string(),
        format!("{{\"id\":\"b\",\"text\":\"{poem}\"}}"),
    ];
    std::fs::write(&input, lines.join("\n") + "\n").unwrap();
    let out = dir.path().join("out");
    dedup(&input, &out, &[]).unwrap();
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("Rejected records by reason") && html.contains("malformed_json"));
    assert_eq!(html.matches("<svg class=\"plot\"").count(), 4);
}
