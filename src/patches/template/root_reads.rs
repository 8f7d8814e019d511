//! Whether a template reads its data only through field chains (`.a.b`, `$.a.b`), so that an
//! execution can walk those chains on the JSON and convert only the values they reach.

use super::ast::{BranchKind, List, Node, Pipeline, Term};

/// True when the data (dot at the top, or `$`) is never used whole: no bare `.` where dot is
/// still the data, no bare `$`, no `{{template}}` call (which could pass the data on).
pub(crate) fn reads_by_fields(main: &List) -> bool {
    list_ok(main, true)
}

/// `root`: dot is the data itself here (not a `with` value or a `range` element).
fn list_ok(list: &List, root: bool) -> bool {
    list.iter().all(|node| node_ok(node, root))
}

fn node_ok(node: &Node, root: bool) -> bool {
    match node {
        Node::Text(_) | Node::Break | Node::Continue => true,
        Node::Action(pipe) => pipe_ok(pipe, root),
        Node::Branch(branch) => {
            pipe_ok(&branch.pipe, root)
                && list_ok(&branch.list, root && branch.kind == BranchKind::If)
                && branch.else_list.as_ref().map_or(true, |list| list_ok(list, root))
        }
        Node::Template { .. } => false,
    }
}

fn pipe_ok(pipe: &Pipeline, root: bool) -> bool {
    pipe.cmds
        .iter()
        .flat_map(|cmd| cmd.args.iter())
        .all(|arg| match &arg.term {
            Term::Dot => !root,
            Term::Variable(name, fields) => !(name == "$" && fields.is_empty()),
            Term::Pipe(inner, _) => pipe_ok(inner, root),
            _ => true,
        })
}

#[cfg(test)]
mod tests {
    use super::super::Template;

    fn by_fields(source: &str) -> bool {
        Template::parse(source).unwrap().inner.reads_by_fields
    }

    #[test]
    fn field_chains_only() {
        assert!(by_fields(
            "{{ .a.b }}-{{ $.c }}{{ if .d }}{{ .e | upper }}{{ end }}"
        ));
        assert!(by_fields(
            "{{ with .a }}{{ . }}{{ end }}{{ range .l }}{{ . }}{{ end }}"
        ));
        assert!(by_fields("{{ ne .v \"off\" }}{{ (printf \"%s\" .x) }}"));
    }

    #[test]
    fn whole_data_used() {
        assert!(!by_fields("{{ . }}"));
        assert!(!by_fields("{{ toJson . }}"));
        assert!(!by_fields("{{ $ }}"));
        assert!(!by_fields("{{ with .a }}{{ $ }}{{ end }}"));
        assert!(!by_fields("{{ if .a }}{{ len . }}{{ end }}"));
        assert!(!by_fields("{{ with .a }}x{{ else }}{{ . }}{{ end }}"));
        assert!(!by_fields("{{ range .l }}x{{ else }}{{ . }}{{ end }}"));
        assert!(!by_fields("{{ $x := . }}{{ $x.a }}"));
        assert!(!by_fields("{{ (index . \"a\") }}"));
        assert!(!by_fields(
            "{{ define \"t\" }}{{ .a }}{{ end }}{{ template \"t\" .b }}"
        ));
    }
}
