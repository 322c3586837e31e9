//! URLs as template learning reads them: a page's host, which pages are counted within,
//! and its canonical URL, which names a page without sentences enough to name it by.

use neardup_core::hash::hash_bytes;

/// A URL's host, lowercased, without scheme, user, port, trailing dot and leading `www.`,
/// `m.`, `amp.`, `mobile.` or `wap.`, and the rest of the URL (path and query, `/` when empty) without its fragment.
/// `None` when the URL has no host.
fn split_url(url: &str) -> Option<(String, &str)> {
    let url = url.trim();
    let url = url.split_once('#').map_or(url, |(u, _)| u);
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next()?,
        None => host.split(':').next()?,
    };
    let mut host = host.trim_end_matches('.').to_ascii_lowercase();
    // The mobile, AMP and www versions of a site are the site.
    while let Some(bare) = ["www.", "m.", "amp.", "mobile.", "wap."]
        .iter()
        .find_map(|p| host.strip_prefix(p).filter(|rest| rest.contains('.')))
    {
        host = bare.to_string();
    }
    (!host.is_empty()).then_some((host, if path.is_empty() { "/" } else { path }))
}

/// Query parameters that track a visit rather than name a page.
fn is_tracking(parameter: &str) -> bool {
    let name = parameter.split('=').next().unwrap_or_default().to_ascii_lowercase();
    name.starts_with("utm_")
        || matches!(
            name.as_str(),
            "fbclid"
                | "gclid"
                | "dclid"
                | "msclkid"
                | "yclid"
                | "mc_cid"
                | "mc_eid"
                | "_ga"
                | "ref"
                | "ref_src"
                | "spm"
                | "igshid"
        )
}

/// The key of a URL's host: lowercased, without scheme, user, port and leading `www.`,
/// `m.`, `amp.`, `mobile.` or `wap.` (the versions of one site). `None` when the URL has
/// no host.
pub fn host_key(url: &str, seed: u64) -> Option<u64> {
    split_url(url).map(|(host, _)| hash_bytes(host.as_bytes(), seed).max(1))
}

/// The key of a canonical URL: what a page without long lines is counted by. The host is
/// taken as in [`host_key`], the fragment and tracking parameters (`utm_*`, `fbclid`,
/// `gclid`, ...) are dropped, so `http://www.Example.com:80/a?utm_source=x#top` and
/// `https://example.com/a` are one URL; path and the other parameters keep their case and
/// order.
pub fn url_key(url: &str, seed: u64) -> u64 {
    match split_url(url) {
        Some((host, rest)) => {
            let mut key = host;
            let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
            key.push_str(path);
            let mut first = true;
            for parameter in query.split('&').filter(|p| !p.is_empty() && !is_tracking(p)) {
                key.push(if first { '?' } else { '&' });
                key.push_str(parameter);
                first = false;
            }
            hash_bytes(key.as_bytes(), seed)
        }
        None => hash_bytes(url.trim().as_bytes(), seed),
    }
}
