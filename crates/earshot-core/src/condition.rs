//! Dynamic constraints (SPEC §2.4): a condition in CEL, compiled once when a grant or capability
//! is written and evaluated at the point of use against the request's context.
//!
//! Fail closed: a variable the context does not carry, a type error, or a result that is not a
//! boolean is a denial with its own failure, never an allow. Every variable the expression
//! references must be present before evaluation starts, so short-circuiting (`true || missing`)
//! cannot hide a missing one.

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock};

/// Longest condition source, in bytes.
pub const MAX_CONDITION_BYTES: usize = 1024;
/// Most variables a request context may carry.
pub const MAX_CONTEXT_VARIABLES: usize = 64;

/// A value in a request's context: what JSON can say, minus nothing.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(untagged)]
pub enum ContextValue {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    String(String),
    List(Vec<ContextValue>),
    Map(BTreeMap<String, ContextValue>),
}

/// The world state a decision is evaluated against, e.g. `{"human_in_cell": false}`.
pub type RequestContext = BTreeMap<String, ContextValue>;

/// Why a condition did not allow.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConditionFailure {
    #[error("condition `{0}` is false")]
    False(String),
    #[error("condition `{condition}` references `{variable}`, which the request context does not carry")]
    UnknownVariable { condition: String, variable: String },
    #[error("condition `{condition}` failed to evaluate: {message}")]
    Error { condition: String, message: String },
    #[error("condition `{condition}` evaluated to a {kind}, not a boolean")]
    NotBoolean { condition: String, kind: String },
}

/// A condition that did not compile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConditionError {
    #[error("is longer than {MAX_CONDITION_BYTES} bytes")]
    TooLong,
    #[error("is not a CEL expression: {0}")]
    Syntax(String),
}

static ENV: LazyLock<Arc<cel::Env>> = LazyLock::new(|| Arc::new(cel::Env::stdlib()));

/// A compiled condition.
#[derive(Clone)]
pub struct Condition {
    source: Arc<str>,
    program: Arc<cel::Program>,
    variables: Arc<[String]>,
}

impl std::fmt::Debug for Condition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Condition").field(&self.source).finish()
    }
}

impl PartialEq for Condition {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

impl Condition {
    pub fn compile(source: &str) -> Result<Self, ConditionError> {
        if source.len() > MAX_CONDITION_BYTES {
            return Err(ConditionError::TooLong);
        }
        let program = ENV.compile(source).map_err(|e| ConditionError::Syntax(e.to_string()))?;
        let mut variables: Vec<String> = program.references().variables().into_iter().map(|v| v.to_string()).collect();
        variables.sort();
        variables.dedup();
        Ok(Condition { source: source.into(), program: Arc::new(program), variables: variables.into() })
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    /// Evaluates the condition against `ctx`: `Ok(())` only for the boolean `true`.
    pub fn evaluate(&self, ctx: &RequestContext) -> Result<(), ConditionFailure> {
        let condition = || self.source.to_string();
        let mut cel_ctx = cel::Context::with_env(ENV.clone());
        for v in self.variables.iter() {
            let Some(value) = ctx.get(v) else {
                return Err(ConditionFailure::UnknownVariable { condition: condition(), variable: v.clone() });
            };
            cel_ctx.add_variable_from_value(v.as_str(), to_cel(value));
        }
        match self.program.execute(&cel_ctx) {
            Ok(cel::Value::Bool(true)) => Ok(()),
            Ok(cel::Value::Bool(false)) => Err(ConditionFailure::False(condition())),
            Ok(other) => {
                Err(ConditionFailure::NotBoolean { condition: condition(), kind: format!("{:?}", other.type_of()) })
            }
            Err(cel::ExecutionError::UndeclaredReference(name)) => {
                Err(ConditionFailure::UnknownVariable { condition: condition(), variable: name.to_string() })
            }
            Err(e) => Err(ConditionFailure::Error { condition: condition(), message: e.to_string() }),
        }
    }
}

fn to_cel(v: &ContextValue) -> cel::Value {
    match v {
        ContextValue::Null => cel::Value::Null,
        ContextValue::Bool(b) => cel::Value::Bool(*b),
        ContextValue::Int(i) => cel::Value::Int(*i),
        ContextValue::Float(f) => cel::Value::Float(*f),
        ContextValue::String(s) => cel::Value::String(Arc::new(s.clone())),
        ContextValue::List(l) => cel::Value::List(Arc::new(l.iter().map(to_cel).collect())),
        ContextValue::Map(m) => {
            let map: std::collections::HashMap<String, cel::Value> =
                m.iter().map(|(k, v)| (k.clone(), to_cel(v))).collect();
            cel::Value::from(map)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(pairs: &[(&str, ContextValue)]) -> RequestContext {
        pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
    }

    #[test]
    fn true_allows_and_false_denies() {
        let c = Condition::compile("human_in_cell == false").unwrap();
        assert_eq!(c.evaluate(&ctx(&[("human_in_cell", ContextValue::Bool(false))])), Ok(()));
        assert!(matches!(
            c.evaluate(&ctx(&[("human_in_cell", ContextValue::Bool(true))])),
            Err(ConditionFailure::False(_))
        ));
    }

    #[test]
    fn unknown_variables_deny_even_behind_short_circuits() {
        let c = Condition::compile("true || missing").unwrap();
        assert!(
            matches!(c.evaluate(&ctx(&[])), Err(ConditionFailure::UnknownVariable { variable, .. }) if variable == "missing")
        );
        let c = Condition::compile("speed < 3").unwrap();
        assert!(matches!(c.evaluate(&ctx(&[])), Err(ConditionFailure::UnknownVariable { .. })));
    }

    #[test]
    fn type_errors_and_non_booleans_deny() {
        let c = Condition::compile("speed < 3").unwrap();
        assert!(matches!(
            c.evaluate(&ctx(&[("speed", ContextValue::String("fast".into()))])),
            Err(ConditionFailure::Error { .. })
        ));
        let c = Condition::compile("speed + 1").unwrap();
        assert!(matches!(
            c.evaluate(&ctx(&[("speed", ContextValue::Int(1))])),
            Err(ConditionFailure::NotBoolean { .. })
        ));
    }

    #[test]
    fn nested_values_are_reachable() {
        let mut m = BTreeMap::new();
        m.insert("zone".to_string(), ContextValue::String("kitchen".into()));
        let c = Condition::compile("room.zone == 'kitchen' && size(tags) == 2").unwrap();
        let tags = ContextValue::List(vec![ContextValue::Int(1), ContextValue::Int(2)]);
        assert_eq!(c.evaluate(&ctx(&[("room", ContextValue::Map(m)), ("tags", tags)])), Ok(()));
    }

    #[test]
    fn conditions_can_live_in_shared_snapshots() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<Condition>();
    }

    #[test]
    fn syntax_errors_are_refused_at_compile_time() {
        assert!(matches!(Condition::compile("a ==="), Err(ConditionError::Syntax(_))));
        assert_eq!(Condition::compile(&"a".repeat(MAX_CONDITION_BYTES + 1)).err(), Some(ConditionError::TooLong));
    }

    #[test]
    fn a_condition_shows_and_compares_by_its_source() {
        let a = Condition::compile("x == 1").unwrap();
        assert_eq!(a.source(), "x == 1");
        assert_eq!(format!("{a:?}"), "Condition(\"x == 1\")");
        assert_eq!(a, Condition::compile("x == 1").unwrap());
        assert_ne!(a, Condition::compile("x == 2").unwrap());
        let at_limit = format!("x == 1{}", " ".repeat(MAX_CONDITION_BYTES - 6));
        assert_eq!(at_limit.len(), MAX_CONDITION_BYTES);
        assert!(Condition::compile(&at_limit).is_ok(), "exactly the limit is allowed");
    }
}
