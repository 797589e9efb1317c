//! Dynamic constraints (SPEC §2.4): a condition in CEL, compiled once when a grant or capability
//! is written and evaluated at the point of use against the request's context.
//!
//! Fail closed: a variable the context does not carry, a type error, or a result that is not a
//! boolean is a denial with its own failure, never an allow. Every variable the expression
//! references must be present before evaluation starts, so short-circuiting (`true || missing`)
//! cannot hide a missing one. A comprehension's own variables (`a` in `xs.all(a, a > 0)`) are
//! not context variables.
//!
//! The language is CEL's core, exactly [`FUNCTIONS`], [`MACROS`] and the type names of [`TYPES`]:
//! a call to anything else is refused when written ([`ConditionError::UnsupportedFunction`]), so
//! an accepted condition never fails for want of a function.
//!
//! Bounded (SPEC §2.6): a condition is refused when written if it is too long, nests too deep,
//! has too many nodes or nests comprehensions more than [`MAX_COMPREHENSION_NESTING`] deep, or if
//! its estimated cost ([`cost`]) exceeds [`COST_BUDGET`] even against the smallest context (every
//! context value can only add cost, so such a condition could never be evaluated). At each
//! evaluation the same estimate is made with the sizes of the request's actual context values,
//! before anything runs, and an estimate over what is left of the decision's [`Budget`] (one
//! [`COST_BUDGET`] shared by every condition a decision evaluates) denies with
//! [`ConditionFailure::OverBudget`] (`denied_condition_error`). No decision therefore spends
//! longer on conditions than the budget allows, on the store's writer (`POST /uses`) or anywhere
//! else; the
//! budget is set so that the most expensive evaluation it admits takes a few milliseconds (see
//! [`COST_BUDGET`]). Contexts are bounded too ([`check_context`]), so the estimate itself and the
//! conversion of a context into CEL values stay cheap.

pub mod cost;

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock};

use cost::Shape;

/// Longest condition source, in bytes.
pub const MAX_CONDITION_BYTES: usize = 1024;
/// Most variables a request context may carry.
pub const MAX_CONTEXT_VARIABLES: usize = 64;
/// Deepest expansion of a condition, in AST nodes from the root to a leaf (macros included):
/// deep enough for any predicate worth writing, shallow enough that the interpreter's recursion
/// never nears a thread's stack.
pub const MAX_CONDITION_DEPTH: usize = 32;
/// Most AST nodes in a condition after macro expansion: a 1,024-byte list of single digits.
pub const MAX_CONDITION_NODES: usize = 512;
/// Most comprehensions (`all`, `exists`, `exists_one`, `map`, `filter`) nested inside one another.
/// Each level multiplies the cost by the size of its range; two levels cover pairwise checks.
pub const MAX_COMPREHENSION_NESTING: usize = 2;
/// The evaluation budget, in the units of [`cost`] (a byte or element touched; a node is
/// [`cost::NODE_COST`], a comprehension step [`cost::ITERATION_COST`] more). Measured in release
/// on the 2-vCPU development machine with `cargo run --release -p earshot-core --example
/// condition_budget`: the slowest shape admitted at the budget (one comprehension over a
/// 3,233-element context list) takes about 0.85 ms, 3.4 ns per unit (median of 15 runs); a
/// debug build is some 20 times slower.
pub const COST_BUDGET: u64 = 250_000;
/// Largest request context, in the size units of [`cost`]: 1 per scalar, list or map, plus the
/// bytes of every string and key. It bounds every list's length and string's length too.
pub const MAX_CONTEXT_SIZE: u64 = 16_384;
/// Deepest nesting of lists and maps in a context value (a scalar is depth 0).
pub const MAX_CONTEXT_DEPTH: usize = 8;

/// The functions and operators a condition may call, each with a condition that calls it and is
/// `true` against an empty context (the test `every_accepted_function_evaluates` runs each, so
/// nothing is accepted when written that cannot evaluate). A call to anything else is refused
/// when written ([`ConditionError::UnsupportedFunction`]): in particular `matches` (a regular
/// expression's cost is not bounded by the estimate), `timestamp` and `duration` (not built in;
/// time is bounded with a constraint's window instead), and the optional-value functions.
pub const FUNCTIONS: &[(&str, &str)] = &[
    // Operators, by their names in the expanded syntax tree.
    ("_?_:_", "1 > 0 ? true : false"),
    ("_&&_", "true && true"),
    ("_||_", "false || true"),
    ("!_", "!false"),
    ("-_", "[1].all(x, -x < 0)"),
    ("_+_", "1 + 2 == 3 && 'a' + 'b' == 'ab' && [1] + [2] == [1, 2]"),
    ("_-_", "3 - 1 == 2"),
    ("_*_", "2 * 3 == 6"),
    ("_/_", "7 / 2 == 3"),
    ("_%_", "7 % 2 == 1"),
    ("_==_", "1 == 1"),
    ("_!=_", "1 != 2"),
    ("_<_", "1 < 2"),
    ("_<=_", "1 <= 1"),
    ("_>_", "2 > 1"),
    ("_>=_", "1 >= 1"),
    ("_[_]", "[1, 2][1] == 2 && {'a': 1}['a'] == 1"),
    ("@in", "1 in [1, 2] && 'a' in {'a': 1}"),
    ("@not_strictly_false", "[1].all(x, x > 0)"),
    // Functions.
    ("size", "size('ab') == 2 && 'ab'.size() == 2 && size([1]) == 1 && size({'a': 1}) == 1"),
    ("contains", "'kitchen'.contains('tch')"),
    ("startsWith", "'kitchen'.startsWith('kit')"),
    ("endsWith", "'kitchen'.endsWith('hen')"),
    ("int", "int('3') == 3 && int(2.5) == 2"),
    ("uint", "uint(3) == 3u"),
    ("double", "double(1) == 1.0"),
    ("string", "string(1) == '1'"),
    ("bool", "bool('true')"),
    ("bytes", "bytes('a') == b'a'"),
    ("dyn", "dyn(1) == 1"),
    ("type", "type(1) == type(2)"),
];

/// The macros, which the parser expands into comprehensions and tests before any call is made,
/// each with a condition that uses it and is `true` against an empty context.
pub const MACROS: &[(&str, &str)] = &[
    ("has", "has({'a': 1}.a)"),
    ("all", "[1, 2].all(x, x > 0)"),
    ("exists", "[1, 2].exists(x, x == 2)"),
    ("exists_one", "[1, 2].exists_one(x, x == 2)"),
    ("existsOne", "[1, 2].existsOne(x, x == 2)"),
    ("map", "[1, 2].map(x, x * 2) == [2, 4] && [1, 2].map(x, x > 1, x) == [2]"),
    ("filter", "[1, 2].filter(x, x > 1) == [2]"),
];

/// The type names a condition may use as values (`type(x) == int`), each with a condition that
/// uses it and is `true` against an empty context. A context variable of the same name shadows
/// the type, as in CEL; an identifier that is neither is a context variable the context must carry.
pub const TYPES: &[(&str, &str)] = &[
    ("int", "type(1) == int"),
    ("uint", "type(1u) == uint"),
    ("double", "type(1.0) == double"),
    ("bool", "type(true) == bool"),
    ("string", "type('a') == string"),
    ("bytes", "type(b'a') == bytes"),
    ("list", "type([1]) == list"),
    ("map", "type({'a': 1}) == map"),
    ("null_type", "type(null) == null_type"),
    ("type", "type(int) == type"),
];

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
    #[error("condition `{condition}` has an estimated cost of {cost} against this context, over the evaluation budget ({left} left of {budget})")]
    OverBudget { condition: String, cost: u64, left: u64, budget: u64 },
}

/// What a decision may still spend on evaluating conditions, in [`cost`] units. One decision
/// (`authorize`, or an explicit use on the store's writer) shares one budget across every
/// condition it evaluates, on every link of every candidate chain, so no decision spends more
/// than [`COST_BUDGET`] however many conditioned links it walks. Spent in a fixed order (the
/// order links are checked), so the outcome is a function of the state and the request.
#[derive(Debug)]
pub struct Budget {
    left: std::cell::Cell<u64>,
}

impl Budget {
    pub fn per_decision() -> Self {
        Budget { left: std::cell::Cell::new(COST_BUDGET) }
    }

    pub fn left(&self) -> u64 {
        self.left.get()
    }
}

/// A condition that did not compile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConditionError {
    #[error("is longer than {MAX_CONDITION_BYTES} bytes")]
    TooLong,
    #[error("is not a CEL expression: {0}")]
    Syntax(String),
    #[error("nests {depth} levels deep, over the limit of {MAX_CONDITION_DEPTH}")]
    TooDeep { depth: usize },
    #[error("has {nodes} expression nodes once its macros are expanded, over the limit of {MAX_CONDITION_NODES}")]
    TooManyNodes { nodes: usize },
    #[error("nests {nesting} comprehensions (all, exists, exists_one, map, filter) inside one another, over the limit of {MAX_COMPREHENSION_NESTING}")]
    TooManyNestedComprehensions { nesting: usize },
    #[error("calls `{name}`, which conditions do not support (the supported functions are {})", supported_functions())]
    UnsupportedFunction { name: String },
    #[error("has an estimated evaluation cost of {cost} even against the smallest context, over the budget of {COST_BUDGET} (a comprehension multiplies the cost of its body by the size of its range)")]
    TooCostly { cost: u64 },
}

/// The supported functions' names, for a message: operators are left out (they are syntax).
fn supported_functions() -> String {
    let names: Vec<String> = FUNCTIONS
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| name.chars().next().is_some_and(|c| c.is_ascii_alphabetic()))
        .map(|name| format!("`{name}`"))
        .collect();
    names.join(", ")
}

/// Why a request context is refused before any condition sees it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContextError {
    #[error("carries {0} variables, over the limit of {MAX_CONTEXT_VARIABLES}")]
    TooManyVariables(usize),
    #[error(
        "has a size of {0} (1 per value plus the bytes of every string and key), over the limit of {MAX_CONTEXT_SIZE}"
    )]
    TooLarge(u64),
    #[error("nests lists and maps {0} deep, over the limit of {MAX_CONTEXT_DEPTH}")]
    TooDeep(usize),
}

/// Checks a request context against the context bounds. The store calls it on every context a
/// client sends; [`Condition::evaluate`] does not rely on it (its estimate uses actual sizes).
pub fn check_context(ctx: &RequestContext) -> Result<(), ContextError> {
    if ctx.len() > MAX_CONTEXT_VARIABLES {
        return Err(ContextError::TooManyVariables(ctx.len()));
    }
    let mut size = 0u64;
    for (k, v) in ctx {
        let depth = v.depth();
        if depth > MAX_CONTEXT_DEPTH {
            return Err(ContextError::TooDeep(depth));
        }
        size = size.saturating_add(cost::Shape::string(as_u64(k.len())).size).saturating_add(v.shape().size);
    }
    if size > MAX_CONTEXT_SIZE {
        return Err(ContextError::TooLarge(size));
    }
    Ok(())
}

impl ContextValue {
    /// Bounds on this value in [`cost`]'s terms.
    pub fn shape(&self) -> Shape {
        match self {
            ContextValue::Null | ContextValue::Bool(_) | ContextValue::Int(_) | ContextValue::Float(_) => Shape::SCALAR,
            ContextValue::String(s) => Shape::string(as_u64(s.len())),
            ContextValue::List(l) => {
                let mut out = Shape { len: as_u64(l.len()), size: 1, elem: 0 };
                for x in l {
                    let s = x.shape();
                    out.size = out.size.saturating_add(s.size);
                    out.elem = out.elem.max(s.size);
                }
                out
            }
            ContextValue::Map(m) => {
                let mut out = Shape { len: as_u64(m.len()), size: 1, elem: 0 };
                for (k, x) in m {
                    let (k, s) = (Shape::string(as_u64(k.len())), x.shape());
                    out.size = out.size.saturating_add(k.size).saturating_add(s.size);
                    out.elem = out.elem.max(k.size).max(s.size);
                }
                out
            }
        }
    }

    /// Nesting of lists and maps: 0 for a scalar or string.
    fn depth(&self) -> usize {
        match self {
            ContextValue::List(l) => 1 + l.iter().map(ContextValue::depth).max().unwrap_or(0),
            ContextValue::Map(m) => 1 + m.values().map(ContextValue::depth).max().unwrap_or(0),
            _ => 0,
        }
    }
}

fn as_u64(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

static ENV: LazyLock<Arc<cel::Env>> = LazyLock::new(|| Arc::new(cel::Env::stdlib()));

/// A compiled condition.
#[derive(Clone)]
pub struct Condition {
    source: Arc<str>,
    program: Arc<cel::Program>,
    /// The free variables: those the context must carry.
    variables: Arc<[String]>,
    /// Free identifiers that name a type ([`TYPES`]): passed when the context carries them (the
    /// variable shadows the type), else the type.
    type_names: Arc<[String]>,
    /// Set only for a condition restored from a record that is over today's bounds: it denies.
    over_bounds: Option<ConditionError>,
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
    /// Compiles a condition being written: refused if it is over any bound.
    pub fn compile(source: &str) -> Result<Self, ConditionError> {
        let c = Self::restore(source)?;
        match c.over_bounds {
            Some(e) => Err(e),
            None => Ok(c),
        }
    }

    /// Compiles a condition read back from a durable record. Only text that is no longer CEL is
    /// refused (the record does not add up); a condition written before the bounds existed, or
    /// under wider ones, still loads, so the store still starts, and denies at every evaluation.
    pub fn restore(source: &str) -> Result<Self, ConditionError> {
        if source.len() > MAX_CONDITION_BYTES {
            return Err(ConditionError::TooLong);
        }
        let program = ENV.compile(source).map_err(|e| ConditionError::Syntax(e.to_string()))?;
        let structure = cost::structure(program.expression());
        let unsupported = structure.calls.iter().find(|c| !FUNCTIONS.iter().any(|(name, _)| name == c));
        let over_bounds = if let Some(name) = unsupported {
            Some(ConditionError::UnsupportedFunction { name: name.clone() })
        } else if structure.depth > MAX_CONDITION_DEPTH {
            Some(ConditionError::TooDeep { depth: structure.depth })
        } else if structure.nodes > MAX_CONDITION_NODES {
            Some(ConditionError::TooManyNodes { nodes: structure.nodes })
        } else if structure.nesting > MAX_COMPREHENSION_NESTING {
            Some(ConditionError::TooManyNestedComprehensions { nesting: structure.nesting })
        } else {
            // The smallest context: every variable an empty list, map or string or a scalar.
            let least = Shape { len: 0, size: 1, elem: 0 };
            let cost = cost::estimate(program.expression(), &|_| least);
            (cost > COST_BUDGET).then_some(ConditionError::TooCostly { cost })
        };
        let (type_names, variables): (Vec<String>, Vec<String>) =
            structure.free.into_iter().partition(|v| TYPES.iter().any(|(name, _)| name == v));
        Ok(Condition {
            source: source.into(),
            program: Arc::new(program),
            variables: variables.into(),
            type_names: type_names.into(),
            over_bounds,
        })
    }

    /// The estimated cost of evaluating this condition against `ctx` (see [`cost`]), including
    /// converting the variables it uses; `None` if a variable is missing, or if the condition is
    /// over its structural bounds (a restored one), where the estimate itself is not bounded.
    pub fn estimated_cost(&self, ctx: &RequestContext) -> Option<u64> {
        if self.over_bounds.is_some() {
            return None;
        }
        let mut shapes = BTreeMap::new();
        let mut conversion = 0u64;
        for v in self.variables.iter() {
            let s = ctx.get(v)?.shape();
            conversion = conversion.saturating_add(s.size);
            shapes.insert(v.as_str(), s);
        }
        for v in self.type_names.iter() {
            let s = ctx.get(v).map_or(Shape::SCALAR, ContextValue::shape);
            conversion = conversion.saturating_add(s.size);
            shapes.insert(v.as_str(), s);
        }
        let run = cost::estimate(self.program.expression(), &|name| {
            // Every free variable is in `shapes`; anything else would be unbound and fail.
            shapes.get(name).copied().unwrap_or(Shape::SCALAR)
        });
        Some(run.saturating_add(conversion))
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    /// Evaluates the condition against `ctx`: `Ok(())` only for the boolean `true`. A budget of
    /// its own: see [`Condition::evaluate_within`] for a decision that evaluates several.
    pub fn evaluate(&self, ctx: &RequestContext) -> Result<(), ConditionFailure> {
        self.evaluate_within(ctx, &Budget::per_decision())
    }

    /// Evaluates the condition against `ctx`, spending its estimated cost from `budget`; a cost
    /// over what is left denies before anything runs.
    pub fn evaluate_within(&self, ctx: &RequestContext, budget: &Budget) -> Result<(), ConditionFailure> {
        let condition = || self.source.to_string();
        if let Some(e) = &self.over_bounds {
            return Err(ConditionFailure::Error { condition: condition(), message: format!("the condition {e}") });
        }
        if let Some(v) = self.variables.iter().find(|v| !ctx.contains_key(v.as_str())) {
            return Err(ConditionFailure::UnknownVariable { condition: condition(), variable: v.clone() });
        }
        // Decided before anything runs: the interpreter cannot be stopped part-way.
        let cost = self.estimated_cost(ctx).unwrap_or(u64::MAX);
        let left = budget.left.get();
        if cost > left {
            return Err(ConditionFailure::OverBudget { condition: condition(), cost, left, budget: COST_BUDGET });
        }
        budget.left.set(left - cost);
        let mut cel_ctx = cel::Context::with_env(ENV.clone());
        for v in self.variables.iter().chain(self.type_names.iter()) {
            if let Some(value) = ctx.get(v) {
                cel_ctx.add_variable_from_value(v.as_str(), to_cel(value));
            }
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

    /// Issue 36: what is accepted when written is what evaluates. Every function the write-time
    /// check accepts is called by its example, which compiles and is `true`; the same for every
    /// macro and type name.
    #[test]
    fn every_accepted_function_evaluates() {
        for (name, src) in FUNCTIONS {
            let c = Condition::compile(src).unwrap_or_else(|e| panic!("`{name}`: {src}: {e}"));
            let calls = cost::structure(c.program.expression()).calls;
            assert!(calls.iter().any(|c| c == name), "the example of `{name}` calls it: {src} calls {calls:?}");
            assert_eq!(c.evaluate(&ctx(&[])), Ok(()), "`{name}`: {src}");
        }
        for (name, src) in MACROS {
            assert!(src.contains(&format!("{name}(")), "the example of `{name}` uses it: {src}");
            let c = Condition::compile(src).unwrap_or_else(|e| panic!("`{name}`: {src}: {e}"));
            let calls = cost::structure(c.program.expression()).calls;
            assert!(!calls.iter().any(|c| c == name), "`{name}` is expanded, not called: {src}");
            assert_eq!(c.evaluate(&ctx(&[])), Ok(()), "`{name}`: {src}");
        }
        for (name, src) in TYPES {
            let c = Condition::compile(src).unwrap_or_else(|e| panic!("`{name}`: {src}: {e}"));
            assert!(c.type_names.iter().any(|t| t == name), "the example of `{name}` names it: {src}");
            assert!(c.variables.is_empty(), "`{name}` is not a context variable: {src}");
            assert_eq!(c.evaluate(&ctx(&[])), Ok(()), "`{name}`: {src}");
        }
    }

    /// Issue 36: a function the interpreter does not have (or whose cost is not bounded) is
    /// refused when written, naming it, instead of denying at every use as a missing variable.
    #[test]
    fn unsupported_functions_are_refused_when_written_naming_them() {
        for (src, name) in [
            ("name.matches('^a+$')", "matches"),
            ("matches(name, 'a')", "matches"),
            ("timestamp('2026-01-01T00:00:00Z') < now", "timestamp"),
            ("duration('1h') > d", "duration"),
            ("optional.of(1).hasValue()", "hasValue"),
            ("x.getHours() > 1", "getHours"),
            ("a.?b == optional.none()", "_?._"),
            ("[1, 2][?0] == optional.of(1)", "_[?_]"),
            ("cel.bind(x, 1, x == 1)", "cel.bind"),
        ] {
            let e = Condition::compile(src).err();
            assert!(
                matches!(&e, Some(ConditionError::UnsupportedFunction { name: n }) if n == name || src.contains(n.as_str())),
                "{src}: {e:?}"
            );
            let message = e.map(|e| e.to_string()).unwrap_or_default();
            assert!(
                message.contains("which conditions do not support") && message.contains("`startsWith`"),
                "{message}"
            );
            // A record written before the check still loads, and denies naming the function.
            let restored = Condition::restore(src).unwrap();
            let denied = restored.evaluate(&ctx(&[]));
            assert!(
                matches!(&denied, Err(ConditionFailure::Error { message, .. }) if message.contains("do not support")),
                "{src}: {denied:?}"
            );
        }
        let e = Condition::compile("name.matches('a')").err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("`matches`"), "{e}");
    }

    /// Issue 36: a type name used as a value is the type unless the context carries a variable of
    /// that name, which shadows it (as in CEL).
    #[test]
    fn type_names_are_types_unless_the_context_shadows_them() {
        let c = Condition::compile("type(x) == int").unwrap();
        assert_eq!(c.evaluate(&ctx(&[("x", ContextValue::Int(3))])), Ok(()));
        assert!(matches!(
            c.evaluate(&ctx(&[("x", ContextValue::String("a".into()))])),
            Err(ConditionFailure::False(_))
        ));
        let c = Condition::compile("int == 3").unwrap();
        assert_eq!(c.evaluate(&ctx(&[("int", ContextValue::Int(3))])), Ok(()));
        // Not a type: still a context variable the context must carry.
        let c = Condition::compile("duration > 3").unwrap();
        assert!(matches!(c.evaluate(&ctx(&[])), Err(ConditionFailure::UnknownVariable { .. })));
    }

    #[test]
    fn syntax_errors_are_refused_at_compile_time() {
        assert!(matches!(Condition::compile("a ==="), Err(ConditionError::Syntax(_))));
        assert_eq!(Condition::compile(&"a".repeat(MAX_CONDITION_BYTES + 1)).err(), Some(ConditionError::TooLong));
    }

    fn list(n: i64) -> ContextValue {
        ContextValue::List((0..n).map(ContextValue::Int).collect())
    }

    fn literal(n: usize) -> String {
        format!("[{}]", (0..n).map(|i| (i % 10).to_string()).collect::<Vec<_>>().join(","))
    }

    #[test]
    fn comprehension_variables_are_not_context_variables() {
        for src in [
            "[1, 2].all(a, a > 0)",
            "[1, 2].exists(a, a == 2)",
            "[1, 2].exists_one(a, a == 2)",
            "size([1, 2].map(a, a * 2)) == 2",
            "size([1, 2].map(a, a > 1, a * 2)) == 1",
            "size([1, 2].filter(a, a > 1)) == 1",
            "{'k': 1}.all(k, k == 'k')",
            "[1, 2].all(a, [3, 4].exists(b, a < b))",
        ] {
            let c = Condition::compile(src).unwrap();
            assert_eq!(c.evaluate(&ctx(&[])), Ok(()), "{src}");
        }
        // A comprehension's variable is bound only inside it, and a real context variable used
        // inside a body is still required.
        let c = Condition::compile("xs.all(a, a < limit)").unwrap();
        let err = c.evaluate(&ctx(&[("xs", list(3))]));
        assert!(matches!(err, Err(ConditionFailure::UnknownVariable { variable, .. }) if variable == "limit"));
        assert_eq!(c.evaluate(&ctx(&[("xs", list(3)), ("limit", ContextValue::Int(9))])), Ok(()));
        let c = Condition::compile("[1].all(a, a > 0) && a > 0").unwrap();
        let err = c.evaluate(&ctx(&[]));
        assert!(matches!(err, Err(ConditionFailure::UnknownVariable { variable, .. }) if variable == "a"));
        // Nor does a variable's name shadow the context for the range it iterates.
        let c = Condition::compile("a.all(a, a > 0)").unwrap();
        assert!(matches!(c.evaluate(&ctx(&[])), Err(ConditionFailure::UnknownVariable { .. })));
        assert_eq!(c.evaluate(&ctx(&[("a", ContextValue::List(vec![ContextValue::Int(1)]))])), Ok(()));
    }

    #[test]
    fn deep_nesting_is_refused_at_compile_time() {
        // A chain of conditionals nests one level per `?` (deep brackets would do too, but the
        // `cel` parser needs more than a test thread's stack for them in a debug build).
        let ok = format!("{}x", "a ? b : ".repeat(MAX_CONDITION_DEPTH - 1));
        assert!(Condition::compile(&ok).is_ok());
        let deep = format!("{}x", "a ? b : ".repeat(MAX_CONDITION_DEPTH));
        assert_eq!(Condition::compile(&deep).err(), Some(ConditionError::TooDeep { depth: MAX_CONDITION_DEPTH + 1 }));
        let e = Condition::compile(&deep).err().unwrap().to_string();
        assert!(e.contains("deep") && e.contains(&MAX_CONDITION_DEPTH.to_string()), "{e}");
    }

    #[test]
    fn too_many_nodes_are_refused_at_compile_time() {
        // Each `all` expands to nine nodes.
        let src = vec!["[].all(a,a)"; 64].join("&&");
        assert!(src.len() <= MAX_CONDITION_BYTES);
        assert!(
            matches!(Condition::compile(&src), Err(ConditionError::TooManyNodes { nodes }) if nodes > MAX_CONDITION_NODES)
        );
        assert!(Condition::compile(&vec!["[].all(a,a)"; 40].join("&&")).is_ok());
    }

    #[test]
    fn nested_comprehensions_beyond_the_limit_are_refused_at_compile_time() {
        let two = "[1].all(a, [1].all(b, a == b))";
        assert!(Condition::compile(two).is_ok());
        let three = "[1].all(a, [1].all(b, [1].exists(c, a == c)))";
        let e = Condition::compile(three).err();
        assert_eq!(e, Some(ConditionError::TooManyNestedComprehensions { nesting: 3 }));
        assert!(e.unwrap().to_string().contains("comprehensions"));
        // A comprehension in another's range runs once, not per element: not nested.
        assert!(Condition::compile("[1].map(a, a).map(b, b).all(c, c > 0)").is_ok());
        // The reported attack: depth 7 over nine-element lists.
        let mut src = "true".to_string();
        for i in 0..7 {
            src = format!("[1,2,3,4,5,6,7,8,9].all(v{i}, {src})");
        }
        assert_eq!(Condition::compile(&src).err(), Some(ConditionError::TooManyNestedComprehensions { nesting: 7 }));
    }

    #[test]
    fn a_huge_estimated_cost_is_refused_at_compile_time() {
        let l = literal(100);
        let src = format!("{l}.all(a, {l}.all(b, a + b >= 0))");
        assert!(src.len() <= MAX_CONDITION_BYTES);
        let e = Condition::compile(&src).err();
        assert!(matches!(e, Some(ConditionError::TooCostly { cost }) if cost > COST_BUDGET), "{e:?}");
        assert!(e.unwrap().to_string().contains("estimated evaluation cost"));
        // Strings count by their bytes: a long literal copied and measured per inner element.
        let pairs = |s: &str| format!("{0}.all(a, {0}.all(b, size('{s}' + 'x') > 0))", literal(20));
        assert!(Condition::compile(&pairs("abc")).is_ok());
        let src = pairs(&"x".repeat(700));
        assert!(src.len() <= MAX_CONDITION_BYTES);
        assert!(matches!(Condition::compile(&src), Err(ConditionError::TooCostly { .. })));
        // The same shapes, small, are fine.
        assert!(Condition::compile(&format!("{0}.all(a, {0}.all(b, a + b >= 0))", literal(10))).is_ok());
    }

    #[test]
    fn the_evaluation_budget_denies_a_condition_made_costly_by_its_context() {
        let c = Condition::compile("xs.all(a, xs.all(b, a + b >= 0))").unwrap();
        assert_eq!(c.evaluate(&ctx(&[("xs", list(20))])), Ok(()));
        let big = ctx(&[("xs", list(2_000))]);
        assert_eq!(check_context(&big), Ok(()), "a context within its own bounds");
        let cost = c.estimated_cost(&big).unwrap();
        assert!(cost > COST_BUDGET);
        assert_eq!(
            c.evaluate(&big),
            Err(ConditionFailure::OverBudget {
                condition: c.source().into(),
                cost,
                left: COST_BUDGET,
                budget: COST_BUDGET
            })
        );
        // Strings count by their bytes: a long context string copied per element.
        let c = Condition::compile("size(xs.map(x, s + s)) > 0").unwrap();
        let small = ctx(&[("xs", list(100)), ("s", ContextValue::String("ab".into()))]);
        assert_eq!(c.evaluate(&small), Ok(()));
        let long = ctx(&[("xs", list(100)), ("s", ContextValue::String("ab".repeat(5_000)))]);
        assert!(matches!(c.evaluate(&long), Err(ConditionFailure::OverBudget { .. })));
    }

    #[test]
    fn one_budget_is_shared_by_the_conditions_of_a_decision() {
        let c = Condition::compile("xs.all(a, a >= 0)").unwrap();
        let xs = ctx(&[("xs", list(1_000))]);
        let cost = c.estimated_cost(&xs).unwrap();
        let budget = Budget::per_decision();
        let fits = COST_BUDGET / cost;
        assert!(fits >= 2, "the test needs several evaluations to fit");
        for _ in 0..fits {
            assert_eq!(c.evaluate_within(&xs, &budget), Ok(()));
        }
        assert_eq!(budget.left(), COST_BUDGET - fits * cost);
        assert!(
            matches!(c.evaluate_within(&xs, &budget), Err(ConditionFailure::OverBudget { left, .. }) if left < cost)
        );
        // A denial spends nothing; a fresh decision starts with the whole budget.
        assert_eq!(budget.left(), COST_BUDGET - fits * cost);
        assert_eq!(c.evaluate(&xs), Ok(()));
    }

    #[test]
    fn a_restored_condition_over_the_bounds_loads_and_denies() {
        let src = "[1].all(a, [1].all(b, [1].exists(c, a == c)))";
        assert!(Condition::compile(src).is_err());
        let c = Condition::restore(src).unwrap();
        assert!(matches!(c.evaluate(&ctx(&[])), Err(ConditionFailure::Error { .. })));
        assert!(matches!(Condition::restore("a ==="), Err(ConditionError::Syntax(_))));
    }

    #[test]
    fn contexts_are_bounded() {
        let many: RequestContext = (0..=MAX_CONTEXT_VARIABLES).map(|i| (format!("v{i}"), ContextValue::Null)).collect();
        assert_eq!(check_context(&many), Err(ContextError::TooManyVariables(MAX_CONTEXT_VARIABLES + 1)));
        let long = ctx(&[("s", ContextValue::String("x".repeat(MAX_CONTEXT_SIZE as usize)))]);
        assert!(matches!(check_context(&long), Err(ContextError::TooLarge(_))));
        let mut deep = ContextValue::Int(1);
        for _ in 0..=MAX_CONTEXT_DEPTH {
            deep = ContextValue::List(vec![deep]);
        }
        assert_eq!(check_context(&ctx(&[("d", deep)])), Err(ContextError::TooDeep(MAX_CONTEXT_DEPTH + 1)));
        assert_eq!(check_context(&ctx(&[("xs", list(1_000)), ("s", ContextValue::String("x".into()))])), Ok(()));
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
