//! The `/convert` decision, pure: a `ConversionReview` (apiextensions.k8s.io/v1) in, the review
//! with its `response` out. Every object is converted to `request.desiredAPIVersion`; one
//! failure fails the whole review, as the API server expects (`result.status: Failure` and a
//! message naming the object).
//!
//! Bounded as it reads: the objects are taken one at a time from the body (kept raw until then),
//! each checked for its size in JSON values before it is decoded, converted, and written to the
//! answer's bytes before the next one is read. So a review costs its body, its answer, and the
//! decoded form of one object, whatever the number of objects (a list of 10,000 Clusters).

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};

use super::{convert, ContractVersions};
use crate::decode::count_values;

/// The apiVersion of a ConversionReview this answers.
pub const REVIEW_API_VERSION: &str = "apiextensions.k8s.io/v1";

/// Most JSON values (objects, arrays, keys, strings, numbers, booleans, nulls) one object of a
/// ConversionReview may hold. Each decodes into a node of up to ~130 bytes, so this bounds the
/// decoded object to some 7 MiB; real objects hold a few thousand (the largest ClusterClass of
/// our real-world corpus under 3,000).
pub const MAX_OBJECT_VALUES: usize = 50_000;

/// A ConversionReview's answer: the bytes to send, and what to log of it.
#[derive(Debug)]
pub struct Answer {
    /// The ConversionReview, as JSON.
    pub bytes: Vec<u8>,
    /// The request's uid (`""` when it could not be read).
    pub uid: String,
    /// Why the conversion failed, when it did.
    pub failure: Option<String>,
}

/// Answers the ConversionReview in `body`; an unreadable body gets a `Failure` response with an
/// empty uid.
pub fn review_bytes(body: &[u8], versions: &dyn ContractVersions) -> Answer {
    let head = match serde_json::from_slice::<Head>(body) {
        Ok(head) => head,
        Err(err) => return failure("", format!("cannot read the ConversionReview: {err}")),
    };
    let Some(request) = head.request.filter(|r| r.get().starts_with('{')) else {
        return failure("", "the ConversionReview has no request".into());
    };
    let fields = match serde_json::from_str::<RequestHead>(request.get()) {
        Ok(fields) => fields,
        Err(err) => return failure("", format!("cannot read the ConversionReview: {err}")),
    };
    let uid = text_of(fields.uid).unwrap_or_default();
    let Some(desired) = text_of(fields.desired).filter(|d| !d.is_empty()) else {
        return failure(
            &uid,
            "the ConversionReview request has no desiredAPIVersion".into(),
        );
    };
    let mut bytes = opening(&uid);
    let objects = Objects {
        desired: &desired,
        versions,
        out: &mut bytes,
        written: 0,
    };
    let mut reader = serde_json::Deserializer::from_str(request.get());
    match (ObjectsOf(objects)).deserialize(&mut reader) {
        Ok(Ok(())) => {}
        Ok(Err(message)) => return failure(&uid, message),
        Err(err) => return failure(&uid, format!("cannot read the ConversionReview: {err}")),
    }
    bytes.extend_from_slice(br#"],"result":{"status":"Success"}}}"#);
    Answer {
        bytes,
        uid,
        failure: None,
    }
}

/// Answers a parsed ConversionReview (the same answer as [`review_bytes`] on its text).
pub fn review_value(review: &Value, versions: &dyn ContractVersions) -> Value {
    let body = serde_json::to_vec(review).unwrap_or_default();
    serde_json::from_slice(&review_bytes(&body, versions).bytes).unwrap_or(Value::Null)
}

/// The review's top level: only `request` is read, kept raw.
#[derive(Deserialize)]
struct Head<'a> {
    #[serde(borrow, default)]
    request: Option<&'a RawValue>,
}

/// The request's fields besides its objects, which are skipped without being kept.
#[derive(Deserialize)]
struct RequestHead<'a> {
    #[serde(borrow, default)]
    uid: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "desiredAPIVersion")]
    desired: Option<&'a RawValue>,
}

/// A JSON string's text; `None` for anything else.
fn text_of(raw: Option<&RawValue>) -> Option<String> {
    serde_json::from_str::<String>(raw?.get()).ok()
}

/// The answer's bytes up to its first converted object.
fn opening(uid: &str) -> Vec<u8> {
    let head = json!({"apiVersion": REVIEW_API_VERSION, "kind": "ConversionReview"}).to_string();
    let mut bytes = head.into_bytes();
    bytes.pop();
    bytes.extend_from_slice(br#","response":{"uid":"#);
    bytes.extend_from_slice(Value::from(uid).to_string().as_bytes());
    bytes.extend_from_slice(br#","convertedObjects":["#);
    bytes
}

/// A failed review of the request `uid` (`""` when not known), saying why.
pub fn failure(uid: &str, message: String) -> Answer {
    let review = json!({
        "apiVersion": REVIEW_API_VERSION,
        "kind": "ConversionReview",
        "response": {
            "uid": uid,
            "convertedObjects": [],
            "result": { "status": "Failure", "message": message },
        },
    });
    Answer {
        bytes: review.to_string().into_bytes(),
        uid: uid.to_owned(),
        failure: Some(message),
    }
}

/// Converts the objects of a request one at a time, writing each to `out`.
struct Objects<'a> {
    desired: &'a str,
    versions: &'a dyn ContractVersions,
    out: &'a mut Vec<u8>,
    /// How many objects were written.
    written: usize,
}

impl Objects<'_> {
    /// Converts the next object and writes it; the message of the failure otherwise.
    fn one(&mut self, raw: &RawValue) -> Result<(), String> {
        let index = self.written;
        if count_values(raw.get().as_bytes(), MAX_OBJECT_VALUES).is_none() {
            return Err(format!(
                "cannot convert object {index}: it holds more than {MAX_OBJECT_VALUES} JSON values; no Cluster API object needs that many"
            ));
        }
        let object: Value =
            serde_json::from_str(raw.get()).map_err(|err| format!("cannot read object {index}: {err}"))?;
        let converted = convert(object, self.desired, self.versions).map_err(|err| err.to_string())?;
        if index > 0 {
            self.out.push(b',');
        }
        serde_json::to_writer(&mut *self.out, &converted).map_err(|err| err.to_string())?;
        self.written += 1;
        Ok(())
    }
}

/// Reads the request object, converting its `objects` as they come and skipping the rest.
struct ObjectsOf<'a>(Objects<'a>);

impl<'de> DeserializeSeed<'de> for ObjectsOf<'_> {
    type Value = Result<(), String>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ObjectsOf<'_> {
    type Value = Result<(), String>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a ConversionReview request")
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut outcome = Ok(());
        while let Some(key) = map.next_key::<String>()? {
            if key == "objects" && outcome.is_ok() {
                outcome = map.next_value_seed(Each(&mut self.0))?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(outcome)
    }
}

/// The `objects` list, each converted as soon as it is read; after a failure the rest are
/// skipped unread.
struct Each<'a, 'b>(&'a mut Objects<'b>);

impl<'de> DeserializeSeed<'de> for Each<'_, '_> {
    type Value = Result<(), String>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Each<'_, '_> {
    type Value = Result<(), String>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of objects")
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Ok(()))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while let Some(raw) = seq.next_element::<&'de RawValue>()? {
            if let Err(message) = self.0.one(raw) {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                return Ok(Err(message));
            }
        }
        Ok(Ok(()))
    }
}
