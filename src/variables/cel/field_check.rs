//! The part of CEL's type checker the API server's compilation of a rule relies on most: a
//! field selected on an object must be one of its declared properties (`undefined field 'x'`),
//! and a scalar has no fields (`type 'string' does not support field selection`). kube-cel
//! has no checker, so the rule's parsed expression is walked here with the types of `self`
//! (and of macro variables ranging over lists and maps) taken from the schema; anything whose
//! type is not known this way is not checked. Errors are worded and placed as cel-go's are.

use std::collections::HashMap;

use cel::common::ast::{operators, EntryExpr, Expr, IdedExpr, SourceInfo};
use cel::parser::Parser;

use super::escaping::escape;
use crate::api::JSONSchemaProps;

/// Deepest expression nesting walked (the parser refuses deeper ones already).
const MAX_EXPRESSION_DEPTH: usize = 256;

/// The fields the API server adds to a resource root's object type.
const RESOURCE_ROOT_FIELDS: [&str; 3] = ["apiVersion", "kind", "metadata"];

/// The checker errors of `expression` with `self` (and `oldSelf`) of type `schema`, formatted
/// as cel-go formats them (`ERROR: <input>:1:5: undefined field 'nope'` and the snippet), or
/// `None` when there are none. `resource_root`: `schema` is a resource root to the API server,
/// whose object type also has `apiVersion`, `kind` and `metadata`.
pub fn field_errors(expression: &str, schema: &JSONSchemaProps, resource_root: bool) -> Option<String> {
    let (parsed, source) = Parser::default().parse_with_source_info(expression).ok()?;
    let mut checker = Checker {
        scopes: vec![HashMap::from([
            ("self", Type::Schema(schema, resource_root)),
            ("oldSelf", Type::Schema(schema, resource_root)),
        ])],
        errors: Vec::new(),
    };
    checker.check(&parsed, 0);
    let mut errors = checker.errors;
    if errors.is_empty() {
        return None;
    }
    errors.sort_by_key(|(id, _)| source.pos_for(*id));
    Some(
        errors
            .iter()
            .map(|(id, message)| located(&source, *id, message))
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

/// One error as cel-go prints it: the position, then the line and a caret under the column.
fn located(source: &SourceInfo, id: u64, message: &str) -> String {
    let Some((line, column)) = source.pos_for(id) else {
        return format!("ERROR: <input>:-1:0: {message}");
    };
    let mut text = format!("ERROR: <input>:{line}:{column}: {message}");
    if let Some(snippet) = source.snippet(line - 1) {
        let dots = ".".repeat(usize::try_from(column - 1).unwrap_or(0));
        text.push_str(&format!("\n | {snippet}\n | {dots}^"));
    }
    text
}

/// What the checker knows of an expression's type.
#[derive(Clone, Copy)]
enum Type<'s> {
    /// A value of this schema node (the flag: a resource root).
    Schema(&'s JSONSchemaProps, bool),
    /// A map key.
    Key,
    /// Anything else: not checked.
    Unknown,
}

struct Checker<'s> {
    scopes: Vec<HashMap<&'s str, Type<'s>>>,
    errors: Vec<(u64, String)>,
}

impl<'s> Checker<'s> {
    /// Checks `expr` and returns its type.
    fn check(&mut self, expr: &'s IdedExpr, depth: usize) -> Type<'s> {
        if depth > MAX_EXPRESSION_DEPTH {
            return Type::Unknown;
        }
        match &expr.expr {
            Expr::Ident(name) => self.lookup(name),
            Expr::Select(select) => {
                let operand = self.check(&select.operand, depth + 1);
                self.select(expr.id, operand, &select.field)
            }
            Expr::Call(call) => {
                let target = call.target.as_deref().map(|t| self.check(t, depth + 1));
                let args: Vec<_> = call.args.iter().map(|a| self.check(a, depth + 1)).collect();
                match (call.func_name.as_str(), target, args.as_slice()) {
                    (operators::INDEX, None, [Type::Schema(list, _), _]) => element(list),
                    _ => Type::Unknown,
                }
            }
            Expr::Comprehension(comprehension) => {
                let range = self.check(&comprehension.iter_range, depth + 1);
                self.check(&comprehension.accu_init, depth + 1);
                let iterated = match range {
                    Type::Schema(node, _) if node.type_ == "array" => element(node),
                    Type::Schema(node, _) if node.additional_properties.is_some() => Type::Key,
                    _ => Type::Unknown,
                };
                let mut scope = HashMap::from([(comprehension.accu_var.as_str(), Type::Unknown)]);
                scope.insert(comprehension.iter_var.as_str(), iterated);
                if let Some(second) = &comprehension.iter_var2 {
                    scope.insert(second.as_str(), Type::Unknown);
                }
                self.scopes.push(scope);
                for part in [
                    &comprehension.loop_cond,
                    &comprehension.loop_step,
                    &comprehension.result,
                ] {
                    self.check(part, depth + 1);
                }
                self.scopes.pop();
                Type::Unknown
            }
            Expr::List(list) => {
                for element in &list.elements {
                    self.check(element, depth + 1);
                }
                Type::Unknown
            }
            Expr::Map(map) => {
                for entry in &map.entries {
                    if let EntryExpr::MapEntry(entry) = &entry.expr {
                        self.check(&entry.key, depth + 1);
                        self.check(&entry.value, depth + 1);
                    }
                }
                Type::Unknown
            }
            Expr::Struct(_) | Expr::Literal(_) | Expr::Unspecified => Type::Unknown,
        }
    }

    fn lookup(&self, name: &str) -> Type<'s> {
        self.scopes
            .iter()
            .rev()
            .find_map(|scope| scope.get(name).copied())
            .unwrap_or(Type::Unknown)
    }

    /// The type of `field` selected on a value of type `operand`, recording an error when the
    /// API server's checker would.
    fn select(&mut self, id: u64, operand: Type<'s>, field: &str) -> Type<'s> {
        let Type::Schema(node, resource_root) = operand else {
            if let Type::Key = operand {
                self.errors
                    .push((id, "type 'string' does not support field selection".to_owned()));
            }
            return Type::Unknown;
        };
        match node.type_.as_str() {
            "object" if node.additional_properties.is_some() => element(node),
            "object" => {
                let declared = node
                    .properties
                    .iter()
                    .find(|(name, _)| escape(name).as_deref() == Some(field));
                match declared {
                    Some((_, property)) => Type::Schema(property, false),
                    None if resource_root && RESOURCE_ROOT_FIELDS.contains(&field) => Type::Unknown,
                    None => {
                        self.errors.push((id, format!("undefined field '{field}'")));
                        Type::Unknown
                    }
                }
            }
            _ if node.is_int_or_string() => Type::Unknown,
            scalar => {
                if let Some(name) = scalar_type_name(scalar, &node.format) {
                    self.errors
                        .push((id, format!("type '{name}' does not support field selection")));
                }
                Type::Unknown
            }
        }
    }
}

/// The type of a list's items or a map's values.
fn element(node: &JSONSchemaProps) -> Type<'_> {
    node.items
        .as_deref()
        .or(node.additional_properties.as_deref())
        .map_or(Type::Unknown, |child| Type::Schema(child, false))
}

/// CEL's name of a scalar schema type (formats with types of their own are left out).
fn scalar_type_name(type_: &str, format: &str) -> Option<&'static str> {
    match (type_, format) {
        ("string", "byte") => Some("bytes"),
        ("string", "date" | "date-time" | "duration") => None,
        ("string", _) => Some("string"),
        ("integer", _) => Some("int"),
        ("number", _) => Some("double"),
        ("boolean", _) => Some("bool"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema(yaml: &str) -> JSONSchemaProps {
        serde_yaml_ng::from_str(yaml).unwrap()
    }

    const OBJECT: &str = "{type: object, properties: {a: {type: object, properties: {b: {type: string}}}, \
                          l: {type: array, items: {type: object, properties: {n: {type: integer}}}}, \
                          m: {type: object, additionalProperties: {type: string}}, \
                          p: {type: object, x-kubernetes-preserve-unknown-fields: true}, \
                          dash-ed: {type: string}}}";

    #[test]
    fn declared_fields_pass_and_others_are_undefined() {
        let object = schema(OBJECT);
        for fine in [
            "self.a.b == 'x'",
            "has(self.a) && self.l.all(x, x.n > 0)",
            "self.m.anything == 'x' && self.m.all(k, k != '')",
            "self.dash__dash__ed == '' && self.l[0].n == 1",
            "[1].all(x, x.whatever)",
        ] {
            assert_eq!(field_errors(fine, &object, false), None, "{fine}");
        }
        assert_eq!(
            field_errors("self.nope == 'x'", &object, false).as_deref(),
            Some("ERROR: <input>:1:5: undefined field 'nope'\n | self.nope == 'x'\n | ....^")
        );
        assert_eq!(
            field_errors("self.l.all(x, x.m > 0)", &object, false).as_deref(),
            Some("ERROR: <input>:1:16: undefined field 'm'\n | self.l.all(x, x.m > 0)\n | ...............^")
        );
        assert_eq!(
            field_errors("self.p.whatever == 1", &object, false).as_deref(),
            Some("ERROR: <input>:1:7: undefined field 'whatever'\n | self.p.whatever == 1\n | ......^")
        );
        assert_eq!(
            field_errors("self.a.b.c == 'x'", &object, false).as_deref(),
            Some("ERROR: <input>:1:9: type 'string' does not support field selection\n | self.a.b.c == 'x'\n | ........^")
        );
    }

    #[test]
    fn has_reports_at_the_macro_and_errors_come_in_source_order() {
        let object = schema(OBJECT);
        assert_eq!(
            field_errors("has(self.a.nope) || self.x == 1", &object, false).as_deref(),
            Some(
                "ERROR: <input>:1:4: undefined field 'nope'\n | has(self.a.nope) || self.x == 1\n | ...^\n\
                 ERROR: <input>:1:25: undefined field 'x'\n | has(self.a.nope) || self.x == 1\n | ........................^"
            )
        );
    }

    #[test]
    fn a_resource_root_also_has_type_and_object_meta() {
        let object = schema(OBJECT);
        let rule = "self.metadata.name == 'x' || self.kind == 'y'";
        assert_eq!(field_errors(rule, &object, true), None);
        assert!(field_errors(rule, &object, false).is_some());
    }
}
