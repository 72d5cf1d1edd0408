//! Streamable HTTP: `POST/GET/DELETE http://ADDR/mcp` served by rmcp's
//! `StreamableHttpService` behind a bearer-token check.
//!
//! Security rules: the token is generated on first use into `.loci/mcp-token` (created
//! with owner-only permissions, 0600 on Unix; an existing file with looser permissions is
//! tightened) and compared in constant time. Every request without the right
//! `Authorization: Bearer TOKEN` gets `401`. A non-loopback address is refused unless
//! `--allow-remote` is given, and the token is required then too. Without
//! `--allow-remote`, a connection from a non-loopback peer is answered `403` and closed
//! whatever the listener (IPv4-mapped IPv6 loopback counts as loopback). With a loopback
//! address, rmcp's `Host` check (DNS-rebinding protection) stays on.
//!
//! As MCP "Streamable HTTP" asks (2025-06-18, "Security Warning"): a request with an
//! `Origin` header that is not one of this machine's pages nor an origin given with
//! `--allow-origin` gets `403`, before its token is looked at ([`origin_allowed`]);
//! requests without `Origin` (not from a browser) pass. A second `initialize` in a
//! session is refused ([`crate::server`]). A session `DELETE` is answered `204 No
//! Content` (rmcp says `202`, which the official Python SDK logs as "Session termination
//! failed: 202": it expects 200 or 204).

use std::convert::Infallible;
use std::io::Write;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;

use crate::stdio::MAX_LINE_BYTES;
use crate::{LociServer, McpError};

/// The token file's name inside `.loci/`.
pub const TOKEN_FILE: &str = "mcp-token";

/// The path the MCP endpoint is served at.
pub const ENDPOINT: &str = "/mcp";

type Body = http_body_util::combinators::BoxBody<Bytes, Infallible>;

/// Binds `addr`, refusing a non-loopback address unless `allow_remote`.
pub async fn bind(addr: SocketAddr, allow_remote: bool) -> Result<TcpListener, McpError> {
    if !addr.ip().is_loopback() && !allow_remote {
        return Err(McpError::Refused(format!(
            "refusing to serve MCP on {addr}: it is not a loopback address, so other machines \
             could reach the memory of this repository. Use 127.0.0.1 or [::1], or pass \
             --allow-remote (the bearer token is still required)"
        )));
    }
    TcpListener::bind(addr)
        .await
        .map_err(|e| McpError::io(format!("binding {addr}"), e))
}

/// Reads the token at `path`, creating it (32 random bytes, hex) with owner-only
/// permissions if it does not exist.
pub fn load_or_create_token(path: &Path) -> Result<String, McpError> {
    match std::fs::read_to_string(path) {
        Ok(s) if !s.trim().is_empty() => {
            restrict_permissions(path)?;
            return Ok(s.trim().to_string());
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(McpError::io(format!("reading {}", path.display()), e)),
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| McpError::io(format!("creating {}", dir.display()), e))?;
    }
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| {
        McpError::io(
            "generating the MCP token",
            std::io::Error::other(e.to_string()),
        )
    })?;
    let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let tmp = path.with_extension("tmp");
    let _ = std::fs::remove_file(&tmp);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options
        .open(&tmp)
        .map_err(|e| McpError::io(format!("creating {}", tmp.display()), e))?;
    file.write_all(format!("{token}\n").as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|e| McpError::io(format!("writing {}", tmp.display()), e))?;
    std::fs::rename(&tmp, path)
        .map_err(|e| McpError::io(format!("creating {}", path.display()), e))?;
    Ok(token)
}

#[cfg(unix)]
fn restrict_permissions(path: &Path) -> Result<(), McpError> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(path)
        .map_err(|e| McpError::io(format!("reading {}", path.display()), e))?;
    if meta.permissions().mode() & 0o077 != 0 {
        tracing::warn!(path = %path.display(), "the MCP token was readable by others; restricting it to 0600");
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| McpError::io(format!("restricting {}", path.display()), e))?;
    }
    Ok(())
}

#[cfg(not(unix))]
fn restrict_permissions(_path: &Path) -> Result<(), McpError> {
    Ok(())
}

/// Whether a connection from `peer` may be served: always with `allow_remote`, else only
/// from a loopback address (`127.0.0.0/8`, `::1`, or `::ffff:127.x.y.z`).
pub fn peer_allowed(peer: SocketAddr, allow_remote: bool) -> bool {
    allow_remote || peer.ip().to_canonical().is_loopback()
}

/// Who may use the server: the bearer token, whether non-loopback peers are served, and
/// the browser origins served besides this machine's.
#[derive(Clone, Debug)]
pub struct Access {
    /// The bearer token every request must carry.
    pub token: String,
    /// Serve non-loopback peers (`--allow-remote`).
    pub allow_remote: bool,
    /// Origins (`scheme://host[:port]`) served besides this machine's (`--allow-origin`).
    pub allowed_origins: Vec<String>,
}

/// An origin as compared: lower-case scheme and host (IPv6 without brackets), and the
/// port, the scheme's default when the origin names none (RFC 6454 §4).
fn parse_origin(origin: &str) -> Option<(String, String, Option<u16>)> {
    let uri: hyper::Uri = origin.trim().parse().ok()?;
    let scheme = uri.scheme_str()?.to_ascii_lowercase();
    let authority = uri.authority()?;
    if uri
        .path_and_query()
        .is_some_and(|p| !matches!(p.as_str(), "" | "/"))
    {
        return None;
    }
    let host = authority
        .host()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase();
    let port = authority.port_u16().or(match scheme.as_str() {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    });
    Some((scheme, host, port))
}

/// Whether a request with `Origin: origin` may be served: a page of this machine
/// (`http` or `https` on `localhost`, `127.0.0.1` or `::1`, any port), or one of
/// `allowed` (same scheme, host and port). `null`, an unparsable value and any other
/// origin are refused: a page elsewhere must not reach a local server through the
/// user's browser (DNS rebinding, MCP "Streamable HTTP": "Servers MUST validate the
/// Origin header").
pub fn origin_allowed(origin: &str, allowed: &[String]) -> bool {
    let Some((scheme, host, port)) = parse_origin(origin) else {
        return false;
    };
    let local = matches!(scheme.as_str(), "http" | "https")
        && matches!(host.as_str(), "localhost" | "127.0.0.1" | "::1");
    local
        || allowed
            .iter()
            .filter_map(|a| parse_origin(a))
            .any(|a| a == (scheme.clone(), host.clone(), port))
}

/// Whether `request` carries `Authorization: Bearer <token>` (constant-time comparison).
pub fn authorized<B>(request: &Request<B>, token: &str) -> bool {
    let Some(value) = request
        .headers()
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let value = value.trim();
    let Some((scheme, given)) = value.split_once(' ') else {
        return false;
    };
    scheme.eq_ignore_ascii_case("bearer")
        && constant_time_eq::constant_time_eq(given.trim().as_bytes(), token.as_bytes())
}

fn plain(status: StatusCode, text: &str) -> Response<Body> {
    let mut r = Response::new(Full::new(Bytes::from(format!("{text}\n"))).boxed());
    *r.status_mut() = status;
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

/// An HTTP error whose body is a JSON-RPC error object.
fn json_error(status: StatusCode, body: &[u8]) -> Response<Body> {
    let mut r = Response::new(Full::new(Bytes::copy_from_slice(body)).boxed());
    *r.status_mut() = status;
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    r
}

/// Serves MCP on `listener` until `shutdown` resolves.
pub async fn serve(
    server: LociServer,
    listener: TcpListener,
    access: Access,
    shutdown: impl Future<Output = ()>,
) -> Result<(), McpError> {
    let Access {
        token,
        allow_remote,
        allowed_origins,
    } = access;
    let allowed_origins: Arc<[String]> = allowed_origins.into();
    let mut config = StreamableHttpServerConfig::default();
    if allow_remote {
        // Remote clients name this host however they reach it; the token guards access.
        config = config.disable_allowed_hosts();
    }
    let mcp = StreamableHttpService::new(
        // Each session its own `initialize` state (a second one is refused).
        move || Ok(server.for_session()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let token: Arc<str> = token.into();
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    tracing::warn!(error = %e, "accepting a connection failed");
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        if !peer_allowed(peer, allow_remote) {
            tracing::warn!(%peer, "refusing an MCP connection from a non-loopback peer");
            tokio::spawn(async move {
                let refuse = hyper::service::service_fn(|_: Request<Incoming>| async {
                    Ok::<_, Infallible>(plain(
                        StatusCode::FORBIDDEN,
                        "forbidden: this MCP server only serves this machine (loopback); \
                         start it with --allow-remote to serve others",
                    ))
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .keep_alive(false)
                    .serve_connection(TokioIo::new(stream), refuse)
                    .await;
            });
            continue;
        }
        let mcp = mcp.clone();
        let token = token.clone();
        let allowed_origins = allowed_origins.clone();
        let service = hyper::service::service_fn(move |request: Request<Incoming>| {
            let mcp = mcp.clone();
            let token = token.clone();
            let allowed_origins = allowed_origins.clone();
            async move {
                if let Some(origin) = request.headers().get(hyper::header::ORIGIN) {
                    let origin = origin.to_str().unwrap_or("");
                    if !origin_allowed(origin, &allowed_origins) {
                        tracing::warn!(%peer, origin, "refusing an MCP request from a browser page of another origin");
                        return Ok::<_, Infallible>(plain(
                            StatusCode::FORBIDDEN,
                            &format!(
                                "forbidden: requests from pages of origin `{origin}` are not served; \
                                 start loci mcp with --allow-origin ORIGIN to serve them"
                            ),
                        ));
                    }
                }
                if !authorized(&request, &token) {
                    tracing::info!(%peer, "MCP request without a valid bearer token");
                    let mut r = plain(
                        StatusCode::UNAUTHORIZED,
                        "missing or wrong bearer token: send `Authorization: Bearer <token>` \
                         with the token from .loci/mcp-token",
                    );
                    r.headers_mut().insert(
                        hyper::header::WWW_AUTHENTICATE,
                        hyper::header::HeaderValue::from_static("Bearer realm=\"loci\""),
                    );
                    return Ok::<_, Infallible>(r);
                }
                if request.uri().path() != ENDPOINT {
                    return Ok(plain(
                        StatusCode::NOT_FOUND,
                        "not found: the MCP endpoint is /mcp",
                    ));
                }
                if request.method() == hyper::Method::DELETE {
                    let mut r = mcp.handle(request).await;
                    if r.status() == StatusCode::ACCEPTED {
                        // The session is closed; there is nothing to accept later.
                        *r.status_mut() = StatusCode::NO_CONTENT;
                        *r.body_mut() = Full::new(Bytes::new()).boxed();
                        r.headers_mut().remove(hyper::header::CONTENT_TYPE);
                    }
                    return Ok(r);
                }
                if request.method() != hyper::Method::POST {
                    return Ok(mcp.handle(request).await);
                }
                // rmcp answers a body it cannot read with 415 and plain text; refuse bad
                // bodies here as the stdio reader does, with a JSON-RPC error and 400
                // (MCP "Streamable HTTP": an HTTP error status, a JSON-RPC error body).
                let (parts, body) = request.into_parts();
                let bytes = match http_body_util::Limited::new(body, MAX_LINE_BYTES)
                    .collect()
                    .await
                {
                    Ok(collected) => collected.to_bytes(),
                    Err(e) => {
                        tracing::warn!(%peer, error = %e, "unreadable or oversized MCP body");
                        return Ok(json_error(
                            StatusCode::PAYLOAD_TOO_LARGE,
                            &crate::stdio::error_line(
                                serde_json::Value::Null,
                                rmcp::model::ErrorCode::INVALID_REQUEST,
                                format!(
                                    "invalid request: the body is unreadable or longer than \
                                     {MAX_LINE_BYTES} bytes"
                                ),
                            ),
                        ));
                    }
                };
                if let Some(reply) = crate::stdio::refusal(&bytes) {
                    return Ok(json_error(StatusCode::BAD_REQUEST, &reply));
                }
                Ok(mcp
                    .handle(Request::from_parts(parts, Full::new(bytes)))
                    .await)
            }
        });
        tokio::spawn(async move {
            let conn = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
            if let Err(e) = conn {
                tracing::debug!(%peer, error = %e, "connection ended with an error");
            }
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{origin_allowed, peer_allowed};

    #[test]
    fn origins_of_this_machine_and_allowed_ones_are_served_others_refused() {
        let allowed = vec!["https://app.example.com:8443".to_string()];
        for (origin, served) in [
            ("http://localhost", true),
            ("http://localhost:3000", true),
            ("https://LOCALHOST:8443", true),
            ("http://127.0.0.1:7077", true),
            ("http://[::1]:5173", true),
            ("https://app.example.com:8443", true),
            ("https://app.example.com", false),
            ("http://app.example.com:8443", false),
            ("http://evil.example.com", false),
            ("http://localhost.evil.example.com", false),
            ("http://127.0.0.2", false),
            ("null", false),
            ("", false),
            ("file:///etc/passwd", false),
            ("http://localhost/path", false),
        ] {
            assert_eq!(origin_allowed(origin, &allowed), served, "{origin}");
        }
        assert!(!origin_allowed("https://app.example.com:8443", &[]));
    }

    #[test]
    fn non_loopback_peers_are_refused_unless_remote_is_allowed() {
        for (peer, local) in [
            ("127.0.0.1:5000", true),
            ("127.8.9.10:5000", true),
            ("[::1]:5000", true),
            ("[::ffff:127.0.0.1]:5000", true),
            ("10.0.0.5:5000", false),
            ("192.168.1.20:5000", false),
            ("[::ffff:10.0.0.5]:5000", false),
            ("[2001:db8::1]:5000", false),
            ("0.0.0.0:5000", false),
        ] {
            let peer = peer.parse().unwrap();
            assert_eq!(peer_allowed(peer, false), local, "{peer}");
            assert!(peer_allowed(peer, true), "{peer} with --allow-remote");
        }
    }
}
