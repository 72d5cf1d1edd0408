//! The keys of a request's argument object, read from its type: names in declaration
//! order (as serde sees them) with the JSON type and whether each is required (from its
//! schema). A door that checks an argument object itself (the language server's commands)
//! reads its checks from here rather than writing them out again.

use serde::Deserialize;
use serde::de::{self, Visitor};

/// The JSON type of a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyType {
    /// A string.
    String,
    /// A whole number of at most `max` (`u32::MAX` for a `u32`, `i64::MAX` for an `i64`).
    Integer {
        /// The largest value the field holds.
        max: u64,
    },
    /// A number.
    Number,
    /// `true` or `false`.
    Bool,
    /// An array of strings.
    StringList,
    /// Anything else (an array of enum values, an object): the request's deserialization
    /// checks it.
    Other,
}

/// One key of a request's argument object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Key {
    /// Its name.
    pub name: &'static str,
    /// Its JSON type.
    pub ty: KeyType,
    /// Whether it must be present (it has no default).
    pub required: bool,
}

/// The keys of request `R`, in the order its fields are declared (aliases left out).
pub fn keys<R>() -> Vec<Key>
where
    R: for<'de> Deserialize<'de> + schemars::JsonSchema,
{
    let schema = schemars::schema_for!(R);
    let properties = schema.get("properties").and_then(|p| p.as_object());
    let required: Vec<&str> = schema
        .get("required")
        .and_then(|r| r.as_array())
        .map(|r| r.iter().filter_map(|n| n.as_str()).collect())
        .unwrap_or_default();
    fields::<R>()
        .iter()
        .filter_map(|&name| {
            let property = properties?.get(name)?;
            Some(Key {
                name,
                ty: key_type(property),
                required: required.contains(&name),
            })
        })
        .collect()
}

/// The JSON type a property's schema gives (`["string", "null"]` of an `Option` is a string).
fn key_type(property: &serde_json::Value) -> KeyType {
    let types: Vec<&str> = match property.get("type") {
        Some(serde_json::Value::String(t)) => vec![t.as_str()],
        Some(serde_json::Value::Array(ts)) => ts.iter().filter_map(|t| t.as_str()).collect(),
        _ => Vec::new(),
    };
    let ty = types.into_iter().find(|t| *t != "null").unwrap_or_default();
    match ty {
        "string" => KeyType::String,
        "integer" => KeyType::Integer {
            max: match property.get("format").and_then(|f| f.as_str()) {
                Some("uint8") => u64::from(u8::MAX),
                Some("uint16") => u64::from(u16::MAX),
                Some("uint32") => u64::from(u32::MAX),
                Some("int64") => i64::MAX as u64,
                _ => u64::MAX,
            },
        },
        "number" => KeyType::Number,
        "boolean" => KeyType::Bool,
        "array" if property.pointer("/items/type").and_then(|t| t.as_str()) == Some("string") => {
            KeyType::StringList
        }
        _ => KeyType::Other,
    }
}

/// The names serde gives `deserialize_struct` for `R` (its fields, aliases included).
fn fields<R: for<'de> Deserialize<'de>>() -> &'static [&'static str] {
    let mut fields: &'static [&'static str] = &[];
    let _ = R::deserialize(Fields(&mut fields));
    fields
}

/// A deserializer that only records the fields a struct asks for.
struct Fields<'a>(&'a mut &'static [&'static str]);

impl<'de> de::Deserializer<'de> for Fields<'_> {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("not a struct"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Self::Error> {
        *self.0 = fields;
        Err(de::Error::custom("fields recorded"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_come_in_declaration_order_with_their_types() {
        let listed: Vec<String> = keys::<super::super::ImpactArgs>()
            .iter()
            .map(|k| format!("{}:{:?}:{}", k.name, k.ty, k.required))
            .collect();
        expect_test::expect![[r#"
            target:String:true
            depth:Integer { max: 4294967295 }:false
            hard:Bool:false
            min_confidence:Number:false
            limit:Integer { max: 4294967295 }:false
            no_tests:Bool:false"#]]
        .assert_eq(&listed.join("\n"));
        // An alias (`query` of `why`) is no key of its own.
        let names: Vec<&str> = keys::<super::super::WhyArgs>()
            .iter()
            .map(|k| k.name)
            .collect();
        assert_eq!(names, ["target"]);
        let listed: Vec<String> = keys::<super::super::RememberArgs>()
            .iter()
            .map(|k| format!("{}:{:?}", k.name, k.ty))
            .collect();
        expect_test::expect!["subject:String body:String session:Integer { max: 9223372036854775807 } author:String summary:String expect_version:Integer { max: 9223372036854775807 } operation_id:String"]
            .assert_eq(&listed.join(" "));
    }
}
