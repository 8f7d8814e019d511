//! What of a patched template Cluster API keeps. After each patch only the template's `spec`
//! is copied back (its apiVersion, kind and metadata stay as they were), and the desired objects
//! are built from `spec.template.spec` alone: a patch's effect anywhere else is dropped without
//! a word, as Cluster API v1.10.10 drops it.

use serde_json::{Map, Value};

/// A template as it was before patching, without its `spec.template.spec`: what is restored
/// around the patched parts.
#[derive(Debug, Clone)]
pub struct Unpatched(Map<String, Value>);

impl Unpatched {
    /// Records `template` without its `spec.template.spec` (the part patches may change).
    pub fn of(template: &Value) -> Self {
        let mut shell = Map::new();
        let Some(fields) = template.as_object() else {
            return Self(shell);
        };
        for (key, value) in fields {
            let copy = if key == "spec" {
                without(value, "template", |template| {
                    Some(without(template, "spec", |_| None))
                })
            } else {
                value.clone()
            };
            shell.insert(key.clone(), copy);
        }
        Self(shell)
    }

    /// After one patch: every top-level field but `spec` back as it was before patching.
    pub fn keep_spec(&self, patched: &mut Value) {
        let Some(fields) = patched.as_object_mut() else {
            return;
        };
        fields.retain(|key, _| key == "spec" || self.0.contains_key(key));
        for (key, value) in &self.0 {
            if key != "spec" && fields.get(key) != Some(value) {
                fields.insert(key.clone(), value.clone());
            }
        }
    }

    /// After every patch: the template as it was before patching, with the patched
    /// `spec.template.spec` (null when a patch removed it).
    pub fn keep_template_spec(&self, patched: &mut Value) {
        let inner = patched
            .pointer_mut("/spec/template/spec")
            .map(Value::take)
            .unwrap_or(Value::Null);
        let mut kept = self.0.clone();
        if inner.is_null() {
            if let Some(template) = kept
                .get_mut("spec")
                .and_then(|spec| spec.get_mut("template"))
                .and_then(Value::as_object_mut)
            {
                template.insert("spec".to_owned(), inner);
            }
        } else if let Some(template) =
            object_at(&mut kept, "spec").and_then(|spec| object_at(spec, "template"))
        {
            // A template without a spec whose patches add one (`/spec` first) keeps what they add.
            template.insert("spec".to_owned(), inner);
        }
        *patched = Value::Object(kept);
    }
}

/// The object at `key` of `fields`, created empty when absent; None when it is not an object.
fn object_at<'a>(fields: &'a mut Map<String, Value>, key: &str) -> Option<&'a mut Map<String, Value>> {
    fields
        .entry(key.to_owned())
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
}

/// A copy of the object `value` with the field `key` replaced by what `inner` makes of it
/// (removed when it gives None); any other value is copied as it is.
fn without(value: &Value, key: &str, inner: impl Fn(&Value) -> Option<Value>) -> Value {
    let Some(fields) = value.as_object() else {
        return value.clone();
    };
    let mut copy = Map::with_capacity(fields.len());
    for (name, field) in fields {
        if name == key {
            if let Some(kept) = inner(field) {
                copy.insert(name.clone(), kept);
            }
        } else {
            copy.insert(name.clone(), field.clone());
        }
    }
    Value::Object(copy)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn template() -> Value {
        json!({
            "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
            "kind": "DockerMachineTemplate",
            "metadata": {"name": "t", "labels": {"a": "1"}},
            "spec": {"template": {"metadata": {"labels": {"b": "2"}}, "spec": {"size": 1}}}
        })
    }

    #[test]
    fn only_the_template_spec_of_a_patched_template_is_kept() {
        let unpatched = Unpatched::of(&template());
        let mut patched = template();
        patched["metadata"]["labels"]["x"] = json!("y");
        patched["spec"]["template"]["metadata"]["labels"]["x"] = json!("y");
        patched["spec"]["extra"] = json!(true);
        patched["spec"]["template"]["spec"]["size"] = json!(2);
        unpatched.keep_template_spec(&mut patched);
        let mut expected = template();
        expected["spec"]["template"]["spec"]["size"] = json!(2);
        assert_eq!(patched, expected);
    }

    #[test]
    fn between_patches_everything_outside_spec_is_restored() {
        let unpatched = Unpatched::of(&template());
        let mut patched = template();
        patched["metadata"]["labels"]["x"] = json!("y");
        patched["status"] = json!({"ready": true});
        patched["spec"]["extra"] = json!(true);
        patched["spec"]["template"]["spec"]["size"] = json!(2);
        unpatched.keep_spec(&mut patched);
        let mut expected = template();
        expected["spec"]["extra"] = json!(true);
        expected["spec"]["template"]["spec"]["size"] = json!(2);
        assert_eq!(patched, expected);
    }

    #[test]
    fn a_template_spec_added_by_the_patches_is_kept() {
        // vSphere's class: the VSphereClusterTemplate has no spec; its patch adds `/spec` first.
        let bare = json!({"apiVersion": "v1", "kind": "VSphereClusterTemplate", "metadata": {"name": "t"}});
        let unpatched = Unpatched::of(&bare);
        let mut patched = bare.clone();
        patched["spec"] = json!({"template": {"spec": {"server": "vcenter"}}});
        unpatched.keep_template_spec(&mut patched);
        assert_eq!(
            patched["spec"],
            json!({"template": {"spec": {"server": "vcenter"}}})
        );
        assert_eq!(patched["metadata"], bare["metadata"]);
    }

    #[test]
    fn a_removed_template_spec_stays_removed() {
        let unpatched = Unpatched::of(&template());
        let mut patched = json!({"spec": {}});
        unpatched.keep_template_spec(&mut patched);
        assert_eq!(patched["spec"]["template"]["spec"], Value::Null);
        assert_eq!(patched["metadata"]["name"], json!("t"));
    }
}
