//! The API's one error type and the single place where store errors become HTTP responses.

use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use earshot_store::StoreError;
use serde_json::{json, Value};

/// An error as clients see it: `{"error": {"code", "message", "details"}}` with a status.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    pub details: Value,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError { status, code, message: message.into(), details: json!({}) }
    }

    pub fn with_details(mut self, details: Value) -> Self {
        self.details = details;
        self
    }

    pub fn unauthenticated(message: &str) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "unauthenticated", message)
    }

    pub fn forbidden(message: &str) -> Self {
        Self::new(StatusCode::FORBIDDEN, "forbidden", message)
    }

    pub fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, message)
    }

    /// The body clients see: `{"error": {"code", "message", "details"}}` (also inside a stream
    /// that fails after it started).
    pub fn body(&self) -> Value {
        json!({"error": {"code": self.code, "message": self.message, "details": self.details}})
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if self.status.is_server_error() {
            tracing::error!(code = self.code, message = %self.message, "request failed");
        } else {
            tracing::debug!(code = self.code, status = self.status.as_u16(), "request refused");
        }
        let retry_after = self.details.get("retry_after_s").and_then(Value::as_u64);
        let body = self.body();
        let mut resp = (self.status, axum::Json(body)).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            // RFC 6750 §3: a 401 names the scheme the client should use.
            resp.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        // Conditions that pass by themselves (a full disk, storage being reopened) say when to
        // retry in the standard header too, so generic clients back off.
        if let Some(s) = retry_after {
            resp.headers_mut().insert(axum::http::header::RETRY_AFTER, axum::http::HeaderValue::from(s));
        }
        resp
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        use StoreError as E;
        let code = e.code();
        let status = match &e {
            // Same code as `AnonymousParticipant`, so the same status.
            E::InvalidId { source: earshot_core::IdError::Anonymous, .. } => StatusCode::UNPROCESSABLE_ENTITY,
            E::InvalidId { .. }
            | E::InvalidInput { .. }
            | E::LimitExceeded { .. }
            | E::InvalidToken
            | E::TokenStoreMismatch
            | E::InvalidCursor
            | E::InvalidIdempotencyKey => StatusCode::BAD_REQUEST,
            E::StoreNotFound(_)
            | E::ParticipantNotFound(_)
            | E::ItemNotFound(_)
            | E::SourceNotFound(_)
            | E::GrantNotFound(_)
            | E::SubjectNotFound(_)
            | E::AttemptNotFound(_)
            | E::AuthorNotFound(_)
            | E::TrustNotFound(_) => StatusCode::NOT_FOUND,
            E::SchemaInvalid(_)
            | E::UnknownRelation(_)
            | E::CapabilityNotWithinParent(_)
            | E::InvalidPath { .. }
            | E::InvalidCondition { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            E::SchemaNotFound | E::RelationNotFound(_) | E::DeviceNotFound(_) | E::CapabilityNotFound(_) => {
                StatusCode::NOT_FOUND
            }
            E::NotGrantor { .. }
            | E::NotDeviceOwner { .. }
            | E::NotCapabilityHolder { .. }
            | E::NotRevoker { .. }
            | E::NotASubject { .. } => StatusCode::FORBIDDEN,
            E::RelationInUse { .. }
            | E::RelationExists(_)
            | E::AlreadyRevoked(_)
            | E::DeviceExists(_)
            | E::CapabilityExists(_)
            | E::ParentNotValid { .. }
            | E::ParticipantIsDevice(_)
            | E::ParticipantOwnsDevices { .. } => StatusCode::CONFLICT,
            E::StoreExists(_)
            | E::ParticipantExists(_)
            | E::ParticipantOwnsItems(_)
            | E::ItemExists(_)
            | E::InvalidTransition(_)
            | E::GrantAlreadyRevoked(_)
            | E::AttemptSealed(_)
            | E::RevisionNotLatest { .. }
            | E::WriteConflict(_) => StatusCode::CONFLICT,
            E::RevisionExpired { .. } | E::TokenIncarnationMismatch(_) | E::CursorIncarnationMismatch(_) => {
                StatusCode::GONE
            }
            E::AnonymousParticipant
            | E::OriginUnresolved
            | E::SourceOwnerMismatch { .. }
            | E::PartitionMixedAudiences { .. }
            | E::IdempotencyKeyReused(_)
            | E::ImportInvalid { .. }
            | E::TrustSelf(_)
            | E::WindowInThePast { .. }
            | E::EmbeddingDimensionMismatch { .. }
            | E::InvalidEmbedding { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            E::AttemptCapacity => StatusCode::TOO_MANY_REQUESTS,
            E::ConsistencyTimeout { .. }
            | E::Unavailable
            | E::SearchLagging { .. }
            | E::StorageUnavailable(_)
            | E::StoreReplaced(_) => StatusCode::SERVICE_UNAVAILABLE,
            E::InsufficientStorage { .. } => StatusCode::INSUFFICIENT_STORAGE,
            E::Integrity(_) | E::Storage(_) | E::Search(_) => StatusCode::INTERNAL_SERVER_ERROR,
        };
        let details = match &e {
            E::InvalidId { field, .. } | E::InvalidInput { field, .. } => json!({"field": field}),
            E::LimitExceeded { field, limit } => json!({"field": field, "limit": limit}),
            E::RevisionExpired { requested, oldest } => json!({"requested": requested, "oldest_retained": oldest}),
            E::ConsistencyTimeout { requested, latest } | E::RevisionNotLatest { requested, latest } => {
                json!({"requested": requested, "latest": latest})
            }
            E::InvalidTransition(t) => json!({"state": t.from.as_str(), "action": t.action}),
            E::PartitionMixedAudiences { output } => json!({"output": output}),
            E::SourceOwnerMismatch { source_id, .. } => json!({"source": source_id}),
            E::SchemaInvalid(problems) => json!({"problems": problems}),
            E::CapabilityNotWithinParent(w) => json!({
                "dimension": w.first().map(|x| x.dimension),
                "widenings": w,
            }),
            E::RelationInUse { relation, edges } => json!({"relation": relation, "edges": edges}),
            E::UnknownRelation(relation) => json!({"relation": relation}),
            E::SubjectNotFound(subject) => json!({"field": "subjects", "subject": subject}),
            E::NotASubject { grant, subject } => json!({"grant": grant, "subject": subject}),
            E::ParentNotValid { capability, reason } => json!({"capability": capability, "reason": reason}),
            E::ParticipantIsDevice(participant) => json!({"participant": participant}),
            E::ParticipantOwnsDevices { participant, devices } => {
                json!({"participant": participant, "devices": devices})
            }
            E::InvalidPath { field, .. } => json!({"field": field}),
            E::SearchLagging { indexed, needed } => json!({"indexed": indexed, "needed": needed}),
            // A hint, not a promise: free space is checked again at every write.
            E::InsufficientStorage { available, required } => {
                json!({"available_bytes": available, "required_bytes": required, "retry_after_s": 30})
            }
            E::StorageUnavailable(_) => json!({"retry_after_s": 5}),
            E::StoreReplaced(store) => json!({"store": store, "retry_after_s": 0}),
            E::TokenIncarnationMismatch(store) | E::CursorIncarnationMismatch(store) => json!({"store": store}),
            E::InvalidIdempotencyKey => json!({"header": "Idempotency-Key"}),
            E::IdempotencyKeyReused(key) => json!({"key": key}),
            E::ImportInvalid { line, .. } => json!({"line": line}),
            E::WindowInThePast { field, ends_at, now } => json!({"field": field, "ends_at": ends_at, "now": now}),
            E::EmbeddingDimensionMismatch { field, expected, got } => {
                json!({"field": field, "expected": expected, "got": got})
            }
            E::InvalidEmbedding { field, .. } => json!({"field": field}),
            _ => json!({}),
        };
        // 503 and 507 are conditions the operator and client can act on, so their message is
        // kept; other server errors are internal.
        if status.is_server_error()
            && status != StatusCode::SERVICE_UNAVAILABLE
            && status != StatusCode::INSUFFICIENT_STORAGE
        {
            // Internal causes go to the log, never to the client.
            tracing::error!(error = %e, "internal failure");
            return ApiError::new(status, code, "internal error");
        }
        ApiError::new(status, code, e.to_string()).with_details(details)
    }
}

impl From<JsonRejection> for ApiError {
    fn from(r: JsonRejection) -> Self {
        match r {
            JsonRejection::MissingJsonContentType(_) => ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                "expected `Content-Type: application/json`",
            ),
            JsonRejection::BytesRejection(b) if b.status() == StatusCode::PAYLOAD_TOO_LARGE => {
                ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "body_too_large", "request body is too large")
            }
            JsonRejection::JsonSyntaxError(e) => ApiError::bad_request("malformed_json", e.body_text()),
            JsonRejection::JsonDataError(e) => ApiError::bad_request("invalid_request", e.body_text()),
            other => ApiError::bad_request("invalid_request", other.body_text()),
        }
    }
}

impl From<PathRejection> for ApiError {
    fn from(r: PathRejection) -> Self {
        ApiError::bad_request("invalid_path", r.body_text())
    }
}

impl From<QueryRejection> for ApiError {
    fn from(r: QueryRejection) -> Self {
        ApiError::bad_request("invalid_request", r.body_text())
    }
}

pub type ApiResult<T> = Result<T, ApiError>;
