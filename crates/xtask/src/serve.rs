//! `cargo xtask serve`: build, then serve the site on 127.0.0.1 with a tiny static server.
//! (Also used by the browser tests, on a free port.)

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::hosting::CSP;
use crate::util::{root, step};

pub fn serve(port: u16) -> Result<(), String> {
    let dist = root().join("dist");
    // Served here, so the oEmbed answers name this address.
    crate::build::dist(&dist, Some(&format!("http://127.0.0.1:{port}/")))?;
    let listener = TcpListener::bind(("127.0.0.1", port)).map_err(|e| {
        format!("cannot listen on 127.0.0.1:{port}: {e} (try `cargo xtask serve --port 8081`)")
    })?;
    step(&format!(
        "Serving {} at http://127.0.0.1:{port}/  (Ctrl-C stops)",
        dist.display()
    ));
    serve_forever(listener, dist, "/");
    Ok(())
}

/// Serves `dir` under the URL prefix `mount` (e.g. `/` or `/course/gpu/`) on an already bound
/// listener until the process ends.
pub fn serve_forever(listener: TcpListener, dir: PathBuf, mount: &'static str) {
    let dir = Arc::new(dir);
    for stream in listener.incoming().flatten() {
        let dir = dir.clone();
        std::thread::spawn(move || {
            let _ = handle(stream, &dir, mount);
        });
    }
}

/// Starts a server on a free port in a background thread, serving `dir` under `mount`;
/// returns the site's URL. The browser tests mount the site below the root, as a course
/// page or static host would, to prove that every path in it is relative.
pub fn spawn_background(dir: PathBuf, mount: &'static str) -> Result<String, String> {
    let listener =
        TcpListener::bind(("127.0.0.1", 0)).map_err(|e| format!("cannot bind a test port: {e}"))?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    std::thread::spawn(move || serve_forever(listener, dir, mount));
    Ok(format!("http://127.0.0.1:{port}{mount}"))
}

fn handle(mut stream: TcpStream, dir: &Path, mount: &str) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    // Drain the headers; nothing in them matters to a static server.
    let mut line = String::new();
    while reader.read_line(&mut line)? > 2 {
        line.clear();
    }
    let mut parts = request_line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or("/"));
    if method != "GET" && method != "HEAD" {
        return respond(
            &mut stream,
            "405 Method Not Allowed",
            "text/plain",
            b"GET only\n",
            true,
        );
    }
    let path = target.split(['?', '#']).next().unwrap_or("/");
    let Some(file) = path
        .strip_prefix(mount.trim_end_matches('/'))
        .filter(|rest| rest.is_empty() || rest.starts_with('/'))
        .and_then(|rest| resolve(dir, rest))
    else {
        return respond(
            &mut stream,
            "404 Not Found",
            "text/plain",
            b"not found\n",
            true,
        );
    };
    match std::fs::read(&file) {
        Ok(body) => respond(&mut stream, "200 OK", mime(&file), &body, method == "GET"),
        Err(_) => respond(
            &mut stream,
            "404 Not Found",
            "text/plain",
            b"not found\n",
            true,
        ),
    }
}

/// Maps a URL path to a file under `dir`, refusing anything that climbs out of it.
fn resolve(dir: &Path, url_path: &str) -> Option<PathBuf> {
    let mut file = dir.to_path_buf();
    for seg in url_path.split('/').filter(|s| !s.is_empty()) {
        if seg == ".." || seg == "." || seg.contains('\\') || seg.contains('%') {
            return None;
        }
        file.push(seg);
    }
    if file.is_dir() {
        file.push("index.html");
    }
    file.is_file().then_some(file)
}

fn mime(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "wasm" => "application/wasm",
        "css" => "text/css; charset=utf-8",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "json" => "application/json",
        "webmanifest" => "application/manifest+json",
        "wgsl" | "txt" | "md" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

fn respond(
    stream: &mut TcpStream,
    status: &str,
    content_type: &str,
    body: &[u8],
    with_body: bool,
) -> std::io::Result<()> {
    // JavaScript may be imported by other origins' pages (a notebook imports widget.mjs), as
    // GitHub Pages allows for every file.
    let cors = if content_type.starts_with("text/javascript") {
        "Access-Control-Allow-Origin: *\r\n"
    } else {
        ""
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
         Cache-Control: no-cache\r\nContent-Security-Policy: {CSP}; frame-ancestors *\r\n\
         {cors}Connection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    if with_body {
        stream.write_all(body)?;
    }
    stream.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_stays_inside_the_site() {
        let dir = root().join("www");
        assert_eq!(resolve(&dir, "/"), Some(dir.join("index.html")));
        assert_eq!(resolve(&dir, "/../Cargo.toml"), None);
        assert_eq!(resolve(&dir, "/%2e%2e/Cargo.toml"), None);
        assert_eq!(resolve(&dir, "/no-such-file"), None);
    }

    #[test]
    fn meta_tag_policy_is_the_header_policy() {
        let html = std::fs::read_to_string(root().join("www/index.html")).unwrap_or_default();
        let meta = format!(r#"http-equiv="Content-Security-Policy" content="{CSP}""#);
        assert!(html.contains(&meta), "www/index.html lacks {meta}");
    }

    #[test]
    fn wasm_has_its_mime_type() {
        assert_eq!(mime(Path::new("a/b_bg.wasm")), "application/wasm");
    }
}
