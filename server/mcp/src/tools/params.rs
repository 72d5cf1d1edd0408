//! The tools' parameters: each tool takes its operation's request type from
//! [`loci_engine::requests`] (its doc comments and defaults are the tool's schema in
//! `tools/list`), wrapped in [`Paged`] when the tool pages its answer; here are only what
//! MCP adds: the `cursor` of a paged answer, and the parameters of tools that take none.

use std::borrow::Cow;
use std::ops::Deref;

use schemars::{Schema, SchemaGenerator};

use super::*;

/// A request of a tool whose answer is paged: the operation's arguments and the `cursor`
/// of the page to return. Its schema is the request's with `cursor` added; it derefs to the
/// request.
#[derive(Clone, Debug)]
pub struct Paged<R> {
    /// The operation's arguments.
    pub args: R,
    /// `next_cursor` of the previous page.
    pub cursor: Option<String>,
}

impl<R> Deref for Paged<R> {
    type Target = R;
    fn deref(&self) -> &R {
        &self.args
    }
}

impl<R: JsonSchema> JsonSchema for Paged<R> {
    fn schema_name() -> Cow<'static, str> {
        format!("Paged_{}", R::schema_name()).into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let mut schema = R::json_schema(generator);
        let cursor = CursorParams::json_schema(generator)
            .get("properties")
            .and_then(|p| p.get("cursor"))
            .cloned();
        if let (Some(cursor), Some(Value::Object(properties))) =
            (cursor, schema.get_mut("properties"))
        {
            properties.insert("cursor".into(), cursor);
        }
        schema
    }
}

/// Parses a paged tool's arguments: `cursor`, then the rest as the request `R`, each
/// error naming the argument ([`from_args`]; an unknown one's message lists `cursor` among
/// the arguments, as before the request types moved to the engine).
pub(super) fn paged<R: DeserializeOwned>(mut args: Value) -> Result<Paged<R>, ArgumentError> {
    let cursor = match &mut args {
        Value::Object(map) => map.remove("cursor"),
        _ => None,
    };
    let CursorParams { cursor } = from_args(Value::Object(
        cursor
            .map(|c| ("cursor".to_string(), c))
            .into_iter()
            .collect(),
    ))?;
    Ok(Paged {
        args: from_args_also(args, &["cursor"])?,
        cursor,
    })
}

/// Arguments of tools that take only a cursor.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CursorParams {
    /// `next_cursor` of the previous page.
    #[serde(default)]
    pub cursor: Option<String>,
}

/// Arguments of tools that take none.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}
