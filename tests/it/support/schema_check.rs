//! The report schemas as the tests read them, and a checker of the JSON Schema subset they use.
//! One file for both test trees: the crate's unit tests (`src/tests/fixtures.rs`) and the
//! integration tests (`tests/it/common.rs`) include it by path, since neither can reach the
//! other's modules. `repo_root()` comes from the including module.

/// `spec/schemas/<name>.schema.json`.
pub fn schema(name: &str) -> serde_json::Value {
    let p = super::repo_root().join(format!("spec/schemas/{name}.schema.json"));
    serde_json::from_str(&std::fs::read_to_string(&p).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Checks `v` against the subset of JSON Schema the report schemas use (type, required,
/// properties, items, enum, additionalProperties); returns the first violation with its path.
pub fn conforms(v: &serde_json::Value, s: &serde_json::Value, at: &str) -> Result<(), String> {
    use serde_json::Value;
    const KNOWN: &[&str] = &[
        "$schema",
        "$id",
        "title",
        "description",
        "type",
        "required",
        "properties",
        "items",
        "enum",
        "additionalProperties",
    ];
    if let Value::Object(m) = s {
        if let Some(k) = m.keys().find(|k| !KNOWN.contains(&k.as_str())) {
            return Err(format!(
                "{at}: schema keyword {k} is not supported by this checker"
            ));
        }
    }
    if let Some(Value::Array(allowed)) = s.get("enum") {
        if !allowed.contains(v) {
            return Err(format!("{at}: {v} not in {allowed:?}"));
        }
    }
    if let Some(Value::String(t)) = s.get("type") {
        let ok = match t.as_str() {
            "object" => v.is_object(),
            "array" => v.is_array(),
            "string" => v.is_string(),
            "integer" => v.is_u64() || v.is_i64(),
            "number" => v.is_number(),
            "boolean" => v.is_boolean(),
            "null" => v.is_null(),
            other => return Err(format!("{at}: type {other} not handled")),
        };
        if !ok {
            return Err(format!("{at}: {v} is not {t}"));
        }
    }
    if let Value::Object(m) = v {
        for r in s
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if !m.contains_key(r.as_str().unwrap()) {
                return Err(format!("{at}: missing {r}"));
            }
        }
        let props = s.get("properties").and_then(Value::as_object);
        for (k, x) in m {
            match props.and_then(|p| p.get(k)) {
                Some(ps) => conforms(x, ps, &format!("{at}.{k}"))?,
                None => match s.get("additionalProperties") {
                    Some(Value::Bool(false)) => return Err(format!("{at}: unexpected member {k}")),
                    // A schema for the members `properties` does not name (a map's values).
                    Some(ap @ Value::Object(_)) => conforms(x, ap, &format!("{at}.{k}"))?,
                    _ => {}
                },
            }
        }
    }
    if let (Value::Array(a), Some(items)) = (v, s.get("items")) {
        for (i, x) in a.iter().enumerate() {
            conforms(x, items, &format!("{at}[{i}]"))?;
        }
    }
    Ok(())
}
