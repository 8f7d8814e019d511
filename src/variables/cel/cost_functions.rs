//! What calling a function costs in the static estimate, beyond evaluating its target: the
//! Kubernetes library's estimates first (strings, lists, regexes, IPs, quantities, ...), then
//! cel-go's (string traversal, equality, containment, logic), else one unit plus the arguments.
//! Functions that walk a value cost a tenth of a unit per character or element of the largest
//! value the schema admits.

use cel::common::ast::LiteralValue;

use super::cost_size::{factor, Size};
use super::cost_types::{Entries, Node, Path, Step, Ty};

/// What one character of a string costs in a traversal (cel-go's `StringTraversalCostFactor`).
const TRAVERSAL: f64 = 0.1;
/// What one character of a regular expression costs (cel-go's `RegexStringLengthCostFactor`).
const REGEX: f64 = 0.25;
/// The longest regular expression of a name format (Kubernetes' `MaxNameFormatRegexSize`).
const NAME_FORMAT_REGEX: f64 = 128.0;

/// An operand of a call, as the estimate sees it.
pub struct Operand<'a> {
    pub ty: Ty<'a>,
    pub size: Option<Size>,
    /// Where it was read from (none for an accumulator, as cel-go omits those).
    pub path: Option<Path>,
    pub entries: Option<Entries>,
    pub literal: Option<&'a LiteralValue>,
}

impl Operand<'_> {
    fn size(&self) -> Size {
        self.size.unwrap_or_else(Size::unknown)
    }

    fn is_text(&self) -> bool {
        matches!(self.ty, Ty::String | Ty::Bytes | Ty::Dyn)
    }
}

/// A call to cost: the function, its target and arguments, and what evaluating the arguments costs.
pub struct Call<'c, 'a> {
    pub function: &'c str,
    pub target: Option<Operand<'a>>,
    pub args: Vec<Operand<'a>>,
    pub arg_costs: Vec<u64>,
    /// The size the schema gives the value at a path.
    pub estimator: &'c dyn Fn(&Option<Path>) -> Option<Size>,
}

/// The cost of a call (arguments included, target not), and what is known of its result.
pub struct Estimate {
    pub cost: u64,
    pub size: Option<Size>,
    pub entries: Option<Entries>,
}

/// The cost of `call`.
pub fn call_cost(call: &Call<'_, '_>) -> Estimate {
    let args = call
        .arg_costs
        .iter()
        .fold(0, |sum: u64, c| sum.saturating_add(*c));
    let with_args = |cost: u64, size: Option<Size>| Estimate {
        cost: cost.saturating_add(args),
        size,
        entries: None,
    };
    if let Some((cost, size)) = library(call) {
        return with_args(cost, size);
    }
    let (target, a) = (call.target.as_ref(), &call.args);
    let arg = |i: usize| a.get(i).map_or_else(Size::unknown, Operand::size);
    match (call.function, target, a.len()) {
        ("format", Some(target), _) => with_args(target.size().factor(TRAVERSAL), None),
        // Conversions between strings and bytes walk the value; for a dyn value every overload counts.
        ("string", None, 1) if matches!(a[0].ty, Ty::Bytes | Ty::Dyn) => {
            let size = arg(0);
            let result = Size {
                min: size.min / 4,
                max: size.max,
            };
            with_args(
                size.factor(TRAVERSAL).max(u64::from(a[0].ty == Ty::Dyn)),
                Some(result),
            )
        }
        ("bytes", None, 1) if matches!(a[0].ty, Ty::String | Ty::Dyn) => {
            let size = arg(0);
            let result = Size {
                min: size.min,
                max: size.max.saturating_mul(4),
            };
            with_args(
                size.factor(TRAVERSAL).max(u64::from(a[0].ty == Ty::Dyn)),
                Some(result),
            )
        }
        ("startsWith" | "endsWith", Some(_), 1) => with_args(arg(0).factor(TRAVERSAL), None),
        ("@in", None, 2) if !matches!(a[1].ty, Ty::Map(_)) => with_args(arg(1).max, None),
        ("matches", Some(text), 1) => with_args(regex(text.size(), arg(0)), None),
        ("matches", None, 2) => with_args(regex(arg(0), arg(1)), None),
        ("contains", Some(text), 1) if text.is_text() => with_args(
            text.size()
                .factor(TRAVERSAL)
                .saturating_mul(arg(0).factor(TRAVERSAL)),
            None,
        ),
        ("_&&_" | "_||_", None, 2) => with_args(0, None),
        ("_?_:_", None, 3) => Estimate {
            cost: call.arg_costs[0].saturating_add(call.arg_costs[1].max(call.arg_costs[2])),
            size: Some(arg(1).union(arg(2))),
            entries: Entries::union(a[1].entries, a[2].entries),
        },
        ("_+_", None, 2) if a[0].is_text() || a[1].is_text() || is_list(&a[0]) || is_list(&a[1]) => {
            concatenation(&a[0], &a[1], args)
        }
        ("_==_" | "_!=_", None, 2) => {
            with_args(Size::fixed(arg(0).max.min(arg(1).max)).factor(TRAVERSAL), None)
        }
        ("_<_" | "_<=_" | "_>_" | "_>=_", None, 2) if a[0].is_text() && a[1].is_text() => {
            with_args(Size::fixed(arg(0).max.min(arg(1).max)).factor(TRAVERSAL), None)
        }
        _ => with_args(1, None),
    }
}

/// Joining two strings, bytes or lists (`args` their cost): a string's characters are copied,
/// a list's elements are not.
fn concatenation(left: &Operand<'_>, right: &Operand<'_>, args: u64) -> Estimate {
    let size = left.size().add(right.size());
    let entries = Entries::union(left.entries, right.entries);
    let cost = if is_list(left) || is_list(right) {
        1
    } else if left.ty == Ty::Dyn || right.ty == Ty::Dyn {
        // Numbers may be added too: the estimate covers every overload.
        size.factor(TRAVERSAL).max(1)
    } else {
        size.factor(TRAVERSAL)
    };
    Estimate {
        cost: cost.saturating_add(args),
        size: Some(size),
        entries,
    }
}

fn is_list(operand: &Operand<'_>) -> bool {
    matches!(operand.ty, Ty::List(_))
}

/// A regular expression's cost: the string's traversal (plus one) times a quarter per character
/// of the expression.
fn regex(text: Size, expression: Size) -> u64 {
    text.add(Size::fixed(1))
        .factor(TRAVERSAL)
        .saturating_mul(expression.factor(REGEX))
}

/// The Kubernetes library's estimate of `call`, arguments not included, with the result's size.
fn library(call: &Call<'_, '_>) -> Option<(u64, Option<Size>)> {
    let (target, a) = (call.target.as_ref(), &call.args);
    let arg = |i: usize| a.get(i).map(Operand::size);
    let traversal = |size: Size| size.factor(TRAVERSAL);
    let element = |list: &Operand<'_>| -> Size {
        let path = list.path.clone().map(|(root, mut steps)| {
            steps.push(Step::Items);
            (root, steps)
        });
        (call.estimator)(&path).unwrap_or_else(Size::unknown)
    };
    Some(match (call.function, target) {
        ("isSorted" | "sum" | "max" | "min" | "indexOf" | "lastIndexOf", Some(target)) => match &target.ty {
            Ty::List(item) => {
                let per_element = match **item {
                    Ty::String | Ty::Bytes => 1 + traversal(element(target)),
                    _ => 1,
                };
                (target.size().max.saturating_mul(per_element), None)
            }
            _ => (traversal(target.size()), None),
        },
        ("url" | "jsonpatch.escapeKey", None) if a.len() == 1 => (traversal(arg(0)?), arg(0)),
        ("lowerAscii" | "upperAscii" | "substring" | "trim", Some(target)) => {
            (traversal(target.size()), Some(target.size()))
        }
        ("replace", Some(target)) if a.len() >= 2 => {
            let size = replaced_size(target.size(), arg(0)?, arg(1)?);
            (target.size().factor(2.0 * TRAVERSAL), Some(size))
        }
        ("split", Some(target)) => {
            let limit = match a.get(1).and_then(|limit| limit.literal) {
                Some(LiteralValue::Int(limit)) => Some(**limit as u64),
                _ => None,
            };
            let max = limit.unwrap_or(target.size().max);
            (target.size().factor(2.0 * TRAVERSAL), Some(Size { min: 0, max }))
        }
        ("join", Some(target)) => {
            let list = target.size();
            let mut size = match target.ty {
                Ty::List(_) => list.mul(element(target)),
                _ => Size::fixed(0),
            };
            if let Some(separator) = arg(0) {
                let separators = Size {
                    min: list.min.saturating_sub(1),
                    max: list.max.saturating_sub(1),
                };
                size = size.add(separator.mul(separators));
            }
            (traversal(size), Some(size))
        }
        ("find" | "findAll", Some(target)) if !a.is_empty() => {
            let max = target.size().max;
            (regex(target.size(), arg(0)?), Some(Size { min: 0, max }))
        }
        ("cidr" | "isIP" | "isCIDR" | "quantity" | "isQuantity" | "semver" | "isSemver", None)
            if !a.is_empty() =>
        {
            (traversal(arg(0)?), None)
        }
        ("ip", Some(_)) => (1, None),
        ("ip", None) if !a.is_empty() => (traversal(arg(0)?), None),
        ("ip.isCanonical", None) if !a.is_empty() => (arg(0)?.factor(2.0 * TRAVERSAL), None),
        ("containsIP", Some(_)) if !a.is_empty() => {
            let parse = if matches!(a[0].ty, Ty::String) {
                traversal(arg(0)?)
            } else {
                0
            };
            (4u64.saturating_add(parse), None)
        }
        ("containsCIDR", Some(_)) if !a.is_empty() => {
            let parse = if matches!(a[0].ty, Ty::String) {
                traversal(arg(0)?)
            } else {
                0
            };
            (7u64.saturating_add(parse), None)
        }
        ("validate", _) if !a.is_empty() => (factor(traversal(arg(0)?), NAME_FORMAT_REGEX * REGEX), None),
        (
            "masked"
            | "prefixLength"
            | "family"
            | "isUnspecified"
            | "isLoopback"
            | "isLinkLocalMulticast"
            | "isLinkLocalUnicast"
            | "isGlobalUnicast"
            | "format.named"
            | "sign"
            | "asInteger"
            | "isInteger"
            | "asApproximateFloat"
            | "isGreaterThan"
            | "isLessThan"
            | "compareTo"
            | "add"
            | "sub"
            | "major"
            | "minor"
            | "patch"
            | "getScheme"
            | "getHostname"
            | "getHost"
            | "getPort"
            | "getEscapedPath"
            | "getQuery",
            _,
        ) => (1, None),
        ("_==_", None) if a.len() == 2 && a[0].ty == Ty::Opaque && a[1].ty == Ty::Opaque => (1, None),
        _ => return None,
    })
}

/// The size of `text` after replacing `from` with `to` everywhere (the Kubernetes estimate).
fn replaced_size(text: Size, from: Size, to: Size) -> Size {
    let (count_max, retained_max) = if from.min == 0 {
        (text.max.saturating_add(1), text.max)
    } else if to.max <= from.min {
        (0, text.max)
    } else {
        ((text.max as f64 / from.min as f64).ceil() as u64, 0)
    };
    let (count_min, retained_min) = if from.max == 0 {
        (text.min.saturating_add(1), text.min)
    } else if from.max <= to.min {
        (0, text.min)
    } else {
        ((text.min as f64 / from.max as f64).ceil() as u64, 0)
    };
    Size {
        min: count_min,
        max: count_max,
    }
    .mul(to)
    .add(Size {
        min: retained_min,
        max: retained_max,
    })
}

/// The type of a call's result, as far as the estimate needs it.
pub fn result_type<'a>(function: &str, target: Option<&Node<'a>>, args: &[Node<'a>]) -> Ty<'a> {
    let first = || {
        target
            .into_iter()
            .chain(args)
            .map(|node| node.ty.clone())
            .find(|ty| *ty != Ty::Dyn)
            .unwrap_or(Ty::Dyn)
    };
    match function {
        "_==_"
        | "_!=_"
        | "_<_"
        | "_<=_"
        | "_>_"
        | "_>=_"
        | "_&&_"
        | "_||_"
        | "!_"
        | "@not_strictly_false"
        | "@in"
        | "startsWith"
        | "endsWith"
        | "contains"
        | "matches"
        | "isSorted"
        | "isIP"
        | "isCIDR"
        | "isQuantity"
        | "isSemver"
        | "isURL"
        | "isInteger"
        | "isGreaterThan"
        | "isLessThan"
        | "containsIP"
        | "containsCIDR"
        | "ip.isCanonical"
        | "isUnspecified"
        | "isLoopback"
        | "isLinkLocalMulticast"
        | "isLinkLocalUnicast"
        | "isGlobalUnicast"
        | "has" => Ty::Bool,
        "size" | "int" | "indexOf" | "lastIndexOf" | "compareTo" | "sign" | "asInteger" | "major"
        | "minor" | "patch" | "prefixLength" | "family" => Ty::Int,
        "double" | "asApproximateFloat" => Ty::Double,
        "uint" => Ty::Uint,
        "string" | "lowerAscii" | "upperAscii" | "trim" | "substring" | "replace" | "format" | "join"
        | "charAt" | "find" | "getScheme" | "getHost" | "getHostname" | "getPort" | "getEscapedPath"
        | "strings.quote" | "base64.encode" => Ty::String,
        "bytes" | "base64.decode" => Ty::Bytes,
        "duration" => Ty::Duration,
        "timestamp" => Ty::Timestamp,
        "split" | "findAll" => Ty::List(Box::new(Ty::String)),
        "ip" | "cidr" | "quantity" | "url" | "semver" | "masked" | "add" | "sub" | "format.named" => {
            Ty::Opaque
        }
        "_[_]" => args.first().map_or(Ty::Dyn, |container| container.ty.element()),
        "_?_:_" => args
            .iter()
            .skip(1)
            .map(|node| node.ty.clone())
            .find(|ty| *ty != Ty::Dyn)
            .unwrap_or(Ty::Dyn),
        "sum" | "min" | "max" => target.map_or_else(first, |list| list.ty.element()),
        "_+_" | "_-_" | "_*_" | "_/_" | "_%_" | "-_" | "reverse" | "sort" | "slice" | "distinct" => first(),
        _ => Ty::Dyn,
    }
}
