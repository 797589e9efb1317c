//! The console's static routes (`earshot_api::console`): the page and its assets served from the
//! binary with their content types, validators and a strict Content-Security-Policy, without a
//! token (they hold no data). That they stay out of the OpenAPI document is checked in openapi.rs.

use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use earshot_api::{Scope, TokenConfig};
use earshot_tests::TestApp;
use http_body_util::BodyExt;
use tower::ServiceExt;

/// A service with authentication on: the console must still load (the token is typed into it).
fn app() -> TestApp {
    TestApp::with_tokens(vec![TokenConfig {
        name: "ops".into(),
        token: "console-admin-secret-0123456789".into(),
        scope: Scope::Admin,
        stores: None,
    }])
}

async fn get(app: &TestApp, uri: &str, etag: Option<&str>) -> (StatusCode, axum::http::HeaderMap, String) {
    let mut req = Request::builder().method("GET").uri(uri);
    if let Some(e) = etag {
        req = req.header(header::IF_NONE_MATCH, e);
    }
    let resp = app.router.clone().oneshot(req.body(Body::empty()).expect("request")).await.expect("infallible");
    let (parts, body) = resp.into_parts();
    let bytes = body.collect().await.expect("body").to_bytes();
    (parts.status, parts.headers, String::from_utf8_lossy(&bytes).into_owned())
}

fn header(h: &axum::http::HeaderMap, name: header::HeaderName) -> &str {
    h.get(&name).and_then(|v| v.to_str().ok()).unwrap_or_else(|| panic!("no {name} header"))
}

#[tokio::test]
async fn the_page_and_its_assets_are_served_with_types_and_a_strict_policy() {
    let app = app();
    for (uri, ty, needle) in [
        ("/console", "text/html; charset=utf-8", "/console/assets/console.js"),
        ("/console/", "text/html; charset=utf-8", "/console/assets/console.css"),
        ("/console/assets/console.js", "text/javascript; charset=utf-8", "cytoscape"),
        ("/console/assets/console.css", "text/css; charset=utf-8", "cytoscape_container"),
    ] {
        let (status, h, body) = get(&app, uri, None).await;
        assert_eq!(status, StatusCode::OK, "{uri}");
        assert_eq!(header(&h, header::CONTENT_TYPE), ty, "{uri}");
        assert!(body.contains(needle), "{uri} lacks {needle}");
        let csp = header(&h, header::CONTENT_SECURITY_POLICY);
        assert_eq!(csp, earshot_api::console::CONTENT_SECURITY_POLICY);
        for directive in ["default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'"] {
            assert!(csp.contains(directive), "{uri}: CSP lacks {directive}");
        }
        assert!(!csp.contains("unsafe"), "{uri}: CSP allows something unsafe: {csp}");
        assert_eq!(header(&h, header::X_CONTENT_TYPE_OPTIONS), "nosniff");
        assert_eq!(header(&h, header::CACHE_CONTROL), "no-cache");

        // The validator: a current copy is answered 304 with no body, a stale one in full.
        let etag = header(&h, header::ETAG).to_string();
        let (status, _, body) = get(&app, uri, Some(&etag)).await;
        assert_eq!((status, body.as_str()), (StatusCode::NOT_MODIFIED, ""), "{uri}");
        let (status, _, _) = get(&app, uri, Some("\"stale\"")).await;
        assert_eq!(status, StatusCode::OK, "{uri}");
    }
}

#[tokio::test]
async fn unknown_assets_and_other_methods_are_refused_as_the_api_refuses() {
    let app = app();
    let (status, _, body) = get(&app, "/console/assets/secrets.js", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(body.contains("\"route_not_found\""), "{body}");
    let req = Request::builder().method("POST").uri("/console").body(Body::empty()).expect("request");
    let resp = app.router.clone().oneshot(req).await.expect("infallible");
    assert_eq!(resp.status(), StatusCode::METHOD_NOT_ALLOWED);
    // The API itself still wants a token: the console adds no way around it.
    let (status, _, _) = get(&app, "/v1/stores", None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}
