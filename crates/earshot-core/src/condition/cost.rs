//! The bounds of a condition (SPEC §2.6): its static structure (depth, nodes, comprehension
//! nesting, free variables) and a deterministic estimate of what evaluating it costs.
//!
//! Why an estimate and not a step counter: the `cel` interpreter offers no way to stop an
//! evaluation part-way, and the core may read no clock, so the only deterministic bound is one
//! decided before evaluation starts. The estimate is an upper bound on the interpreter's work,
//! computed over the macro-expanded AST from upper bounds on the sizes of values ([`Shape`]):
//!
//! - every node evaluated costs [`NODE_COST`];
//! - every call that is not a control operator (`&&`, `||`, `!`, `?:`) also pays the sizes of
//!   its inputs and of its result, since the standard library is at most linear in them (`+`
//!   copies, `==`, `<`, `in`, `contains`, `startsWith`, `endsWith` and `size` scan, conversions
//!   read); a list or string produced by `+` is as large as both operands together, so growth
//!   is tracked too;
//! - a comprehension (`all`, `exists`, `exists_one`, `map`, `filter`) costs its range, plus, per
//!   element of the range, [`ITERATION_COST`], the copy of the element, and its condition and step;
//!   its accumulator grows by the step's result per element (`map` with a `+` inside grows lists),
//!   and the body's cost is charged with the accumulator at its largest, except for the
//!   append-only `map`/`filter` shape, which the interpreter builds in place (mirrored exactly
//!   from `cel`'s own recognition, so the cheaper charge is never given to a step that is
//!   actually copied);
//! - values are copied when put into a list or map literal, bound to a comprehension variable,
//!   returned from a comprehension or indexed out of a container: each copy pays the value's size.
//!
//! Sizes: a scalar is 1, a string or bytes 1 + its length in bytes, a list 1 + its elements', a
//! map 1 + its keys' and values'. Unknown functions are charged as linear and assumed to return
//! something no larger than their inputs plus [`CONVERSION_SLACK`] (`string(1e300)` is 301 bytes).
//! All arithmetic saturates, so an absurd estimate is `u64::MAX`, never a wrap to a small one.

use cel::common::ast::{operators, EntryExpr, Expr, IdedExpr, LiteralValue};

/// Cost of evaluating one node, in units of one byte or element touched.
pub const NODE_COST: u64 = 8;
/// Extra cost of one comprehension step: binding the element in a fresh scope entry.
pub const ITERATION_COST: u64 = 16;
/// What `string(x)` and other unknown functions may add to the size of their inputs.
pub const CONVERSION_SLACK: u64 = 400;

/// Upper bounds on a value: `len` its element count (bytes for a string), `size` its total size,
/// `elem` the size of its largest element (key or value for a map).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub len: u64,
    pub size: u64,
    pub elem: u64,
}

impl Shape {
    pub const SCALAR: Shape = Shape { len: 0, size: 1, elem: 0 };
    /// Nothing at all: the accumulator's starting point when measuring how much a step adds.
    const ZERO: Shape = Shape { len: 0, size: 0, elem: 0 };

    pub fn string(bytes: u64) -> Shape {
        Shape { len: bytes, size: bytes.saturating_add(1), elem: 1 }
    }

    /// A value known only by its total size: it may be a list of that many scalars, or one element.
    fn opaque(size: u64) -> Shape {
        Shape { len: size, size, elem: size }
    }

    fn join(self, o: Shape) -> Shape {
        Shape { len: self.len.max(o.len), size: self.size.max(o.size), elem: self.elem.max(o.elem) }
    }

    /// `a + b` of two lists or strings.
    fn plus(self, o: Shape) -> Shape {
        Shape {
            len: self.len.saturating_add(o.len),
            size: self.size.saturating_add(o.size),
            elem: self.elem.max(o.elem),
        }
    }

    /// `self` grown by `step` `n` times.
    fn grown(self, step: Shape, n: u64) -> Shape {
        Shape {
            len: self.len.saturating_add(step.len.saturating_mul(n)),
            size: self.size.saturating_add(step.size.saturating_mul(n)),
            elem: self.elem.max(step.elem),
        }
    }
}

/// What the structural pass found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Structure {
    /// Longest root-to-leaf path of the expanded AST, in nodes.
    pub depth: usize,
    pub nodes: usize,
    /// Most comprehensions on one root-to-leaf path.
    pub nesting: usize,
    /// Identifiers not bound by an enclosing comprehension: the context variables it needs, sorted.
    pub free: Vec<String>,
    /// The functions and operators it calls (after macro expansion), sorted, each once.
    pub calls: Vec<String>,
}

/// The structure of `e`. Recursion is bounded by the parser's own recursion limit.
pub fn structure(e: &IdedExpr) -> Structure {
    let mut s = Structure::default();
    let mut bound: Vec<&str> = Vec::new();
    let (depth, nesting) = walk_structure(e, &mut bound, &mut s);
    s.depth = depth;
    s.nesting = nesting;
    s.free.sort();
    s.free.dedup();
    s.calls.sort();
    s.calls.dedup();
    s
}

/// Returns (depth, comprehension nesting) of `e`, counting nodes and free identifiers into `s`.
fn walk_structure<'e>(e: &'e IdedExpr, bound: &mut Vec<&'e str>, s: &mut Structure) -> (usize, usize) {
    s.nodes += 1;
    // (depth, nesting) of the children, the comprehension's own level added where it applies.
    let mut below = (0, 0);
    let mut fold = |(d, n): (usize, usize)| below = (below.0.max(d), below.1.max(n));
    match &e.expr {
        Expr::Unspecified | Expr::Literal(_) => {}
        Expr::Ident(name) => {
            // Names starting with `@` are the interpreter's own accumulators; a source cannot
            // spell them, and they are always bound by the comprehension that introduced them.
            if !name.starts_with('@') && !bound.iter().any(|b| b == name) {
                s.free.push(name.clone());
            }
        }
        Expr::Select(sel) => fold(walk_structure(&sel.operand, bound, s)),
        Expr::Call(call) => {
            s.calls.push(call.func_name.clone());
            for c in call.target.iter().map(|t| &**t).chain(&call.args) {
                fold(walk_structure(c, bound, s));
            }
        }
        Expr::List(list) => {
            for x in &list.elements {
                fold(walk_structure(x, bound, s));
            }
        }
        Expr::Map(map) => {
            for entry in &map.entries {
                entry_children(&entry.expr, |c| fold(walk_structure(c, bound, s)));
            }
        }
        Expr::Struct(st) => {
            for entry in &st.entries {
                entry_children(&entry.expr, |c| fold(walk_structure(c, bound, s)));
            }
        }
        Expr::Comprehension(c) => {
            // The range and the accumulator's start are evaluated once, outside the
            // comprehension's scope; the condition, the step and the result run per element and
            // see its variables, so they are nested one level deeper.
            fold(walk_structure(&c.iter_range, bound, s));
            fold(walk_structure(&c.accu_init, bound, s));
            let mark = bound.len();
            bound.push(&c.iter_var);
            if let Some(v2) = &c.iter_var2 {
                bound.push(v2);
            }
            bound.push(&c.accu_var);
            for x in [&c.loop_cond, &c.loop_step, &c.result] {
                let (d, n) = walk_structure(x, bound, s);
                fold((d, n + 1));
            }
            bound.truncate(mark);
        }
    }
    (below.0 + 1, below.1)
}

fn entry_children<'e>(entry: &'e EntryExpr, mut f: impl FnMut(&'e IdedExpr)) {
    match entry {
        EntryExpr::StructField(field) => f(&field.value),
        EntryExpr::MapEntry(m) => {
            f(&m.key);
            f(&m.value);
        }
    }
}

/// The estimated cost of evaluating `e` when each free variable has the shape `var` gives.
/// Call it only on an expression whose comprehension nesting is bounded: each comprehension
/// walks its body twice (once to measure the accumulator's growth, once to charge it).
pub fn estimate(e: &IdedExpr, var: &dyn Fn(&str) -> Shape) -> u64 {
    let mut est = Estimator { var, scope: Vec::new() };
    let (cost, out) = est.walk(e);
    // The result is converted to a plain value once at the end.
    cost.saturating_add(out.size)
}

struct Estimator<'v, 'e> {
    var: &'v dyn Fn(&str) -> Shape,
    scope: Vec<(&'e str, Shape)>,
}

impl<'e> Estimator<'_, 'e> {
    fn lookup(&self, name: &str) -> Shape {
        match self.scope.iter().rev().find(|(n, _)| *n == name) {
            Some((_, s)) => *s,
            None => (self.var)(name),
        }
    }

    /// (cost, shape of the result) of `e`.
    fn walk(&mut self, e: &'e IdedExpr) -> (u64, Shape) {
        match &e.expr {
            Expr::Unspecified => (NODE_COST, Shape::SCALAR),
            Expr::Literal(LiteralValue::String(s)) => (NODE_COST, Shape::string(len(s.inner().len()))),
            Expr::Literal(LiteralValue::Bytes(b)) => (NODE_COST, Shape::string(len(b.inner().len()))),
            Expr::Literal(_) => (NODE_COST, Shape::SCALAR),
            Expr::Ident(name) => (NODE_COST, self.lookup(name)),
            Expr::Select(sel) => {
                let (c, s) = self.walk(&sel.operand);
                let out = if sel.test { Shape::SCALAR } else { Shape::opaque(s.elem) };
                (c.saturating_add(NODE_COST), out)
            }
            Expr::List(list) => {
                let mut cost = NODE_COST.saturating_add(len(list.elements.len()));
                let mut out = Shape { len: len(list.elements.len()), size: 1, elem: 0 };
                for x in &list.elements {
                    let (c, s) = self.walk(x);
                    // Each element is copied into the new list (a context value too).
                    cost = cost.saturating_add(c).saturating_add(s.size);
                    out.size = out.size.saturating_add(s.size);
                    out.elem = out.elem.max(s.size);
                }
                (cost, out)
            }
            Expr::Map(map) => self.entries(map.entries.iter().map(|x| &x.expr)),
            Expr::Struct(st) => self.entries(st.entries.iter().map(|x| &x.expr)),
            Expr::Call(call) => {
                let mut cost = NODE_COST;
                let mut inputs = Vec::with_capacity(call.args.len() + 1);
                if let Some(t) = &call.target {
                    let (c, s) = self.walk(t);
                    cost = cost.saturating_add(c);
                    inputs.push(s);
                }
                for a in &call.args {
                    let (c, s) = self.walk(a);
                    cost = cost.saturating_add(c);
                    inputs.push(s);
                }
                let touched = inputs.iter().fold(0u64, |acc, s| acc.saturating_add(s.size));
                let name = call.func_name.as_str();
                let out = match (name, inputs.as_slice()) {
                    (operators::CONDITIONAL, [_, a, b]) => a.join(*b),
                    (operators::ADD, [a, b]) => a.plus(*b),
                    (operators::INDEX | operators::OPT_INDEX, [a, _]) => Shape::opaque(a.elem.saturating_add(1)),
                    (
                        operators::LOGICAL_AND
                        | operators::LOGICAL_OR
                        | operators::LOGICAL_NOT
                        | operators::NOT_STRICTLY_FALSE
                        | operators::EQUALS
                        | operators::NOT_EQUALS
                        | operators::LESS
                        | operators::LESS_EQUALS
                        | operators::GREATER
                        | operators::GREATER_EQUALS
                        | operators::IN
                        | operators::SUBSTRACT
                        | operators::MULTIPLY
                        | operators::DIVIDE
                        | operators::MODULO
                        | operators::NEGATE
                        | "size"
                        | "contains"
                        | "startsWith"
                        | "endsWith"
                        | "matches"
                        | "int"
                        | "uint"
                        | "double"
                        | "bool",
                        _,
                    ) => Shape::SCALAR,
                    _ => Shape::opaque(touched.saturating_add(CONVERSION_SLACK)),
                };
                let control = matches!(
                    name,
                    operators::CONDITIONAL
                        | operators::LOGICAL_AND
                        | operators::LOGICAL_OR
                        | operators::LOGICAL_NOT
                        | operators::NOT_STRICTLY_FALSE
                );
                if !control {
                    // Reading the inputs, and copying out the result (an indexed element is).
                    cost = cost.saturating_add(touched).saturating_add(out.size);
                }
                (cost, out)
            }
            Expr::Comprehension(c) => {
                let (c_range, range) = self.walk(&c.iter_range);
                let (c_init, init) = self.walk(&c.accu_init);
                let n = range.len;
                let item = Shape::opaque(range.elem);
                let mark = self.scope.len();
                self.scope.push((&c.iter_var, item));
                if let Some(v2) = &c.iter_var2 {
                    self.scope.push((v2, item.join(Shape::SCALAR)));
                }
                // How much one step adds to the accumulator: the step's shape from nothing. A
                // step whose shape does not depend on the accumulator (`&&`, `||`) replaces it
                // rather than growing it.
                self.scope.push((&c.accu_var, Shape::ZERO));
                let (_, from_zero) = self.walk(&c.loop_step);
                self.set_last(init);
                let (_, from_init) = self.walk(&c.loop_step);
                let last = if from_zero == from_init { init.join(from_zero) } else { init.grown(from_zero, n) };
                let charged = if append_only(c) { init } else { last };
                self.set_last(charged);
                let (c_cond, _) = self.walk(&c.loop_cond);
                let (c_step, _) = self.walk(&c.loop_step);
                self.set_last(last);
                let (c_result, out) = self.walk(&c.result);
                self.scope.truncate(mark);
                let per_item = ITERATION_COST.saturating_add(item.size).saturating_add(c_cond).saturating_add(c_step);
                // The result is copied out of the comprehension's scope.
                let cost = NODE_COST
                    .saturating_add(c_range)
                    .saturating_add(c_init)
                    .saturating_add(n.saturating_mul(per_item))
                    .saturating_add(c_result)
                    .saturating_add(out.size);
                (cost, out)
            }
        }
    }

    fn set_last(&mut self, s: Shape) {
        if let Some(last) = self.scope.last_mut() {
            last.1 = s;
        }
    }

    fn entries(&mut self, entries: impl Iterator<Item = &'e EntryExpr>) -> (u64, Shape) {
        let mut cost = NODE_COST;
        let mut out = Shape { len: 0, size: 1, elem: 0 };
        for entry in entries {
            out.len = out.len.saturating_add(1);
            let mut one = |x: &'e IdedExpr, est: &mut Self| {
                let (c, s) = est.walk(x);
                // Keys are hashed and compared on insertion, values copied: charge their sizes.
                cost = cost.saturating_add(c).saturating_add(s.size);
                out.size = out.size.saturating_add(s.size);
                out.elem = out.elem.max(s.size);
            };
            match entry {
                EntryExpr::StructField(f) => one(&f.value, self),
                EntryExpr::MapEntry(m) => {
                    one(&m.key, self);
                    one(&m.value, self);
                }
            }
        }
        (cost, out)
    }
}

/// Whether the interpreter builds this comprehension's result by appending in place (`map`,
/// `filter`), so a step costs what it appends rather than a copy of the accumulator. The same
/// test as `cel`'s `AppendStep::of` plus its run-time check that the start is an empty list.
fn append_only(c: &cel::common::ast::ComprehensionExpr) -> bool {
    let accu = c.accu_var.as_str();
    let is_accu = |e: &IdedExpr| matches!(&e.expr, Expr::Ident(name) if name == accu);
    let appends = |e: &IdedExpr| match &e.expr {
        Expr::Call(call) if call.func_name == operators::ADD && call.target.is_none() => {
            matches!(call.args.as_slice(), [lhs, rhs] if is_accu(lhs) && matches!(rhs.expr, Expr::List(_)))
        }
        _ => false,
    };
    let empty_start = matches!(&c.accu_init.expr, Expr::List(l) if l.elements.is_empty());
    if !empty_start || !is_accu(&c.result) || !matches!(c.loop_cond.expr, Expr::Literal(_)) {
        return false;
    }
    match &c.loop_step.expr {
        Expr::Call(call) if call.func_name == operators::CONDITIONAL && call.target.is_none() => {
            matches!(call.args.as_slice(), [_, step, otherwise] if is_accu(otherwise) && appends(step))
        }
        _ => appends(&c.loop_step),
    }
}

fn len(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}
