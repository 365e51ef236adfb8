//! Declared parameters: what a policy accepts after its name
//! (`name:key=value,key=value`), each declared once with its type, range,
//! default and meaning.
//!
//! A [`ParamDecl`] is the single source for a parameter: validation
//! ([`ParamSet::parse`]), the defaults a policy's configuration is built from
//! ([`ParamSet::u32`] and friends return the declared default when the key
//! was not given), `flushwise policies` and `--help` (which print the
//! declarations) and the run records (which print [`ParamSet::resolved`]).
//!
//! Invariants: a [`ParamSet`] holds only declared keys, each at most once,
//! each with a value of its declared type inside its declared range; a
//! getter asked for an undeclared key or for the wrong type is a bug in the
//! policy's code and panics.

use std::fmt;

/// What values a parameter takes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ParamType {
    /// A whole number in `min..=max`.
    Int { min: u64, max: u64 },
    /// A number in `min..=max`.
    Float { min: f64, max: f64 },
    /// One of the named values: (name, what it means).
    Choice(&'static [(&'static str, &'static str)]),
    /// One of the named values, or a whole number in `min..=max`.
    ChoiceOrInt {
        choices: &'static [(&'static str, &'static str)],
        min: u64,
        max: u64,
    },
}

/// One value of a parameter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ParamValue {
    Int(u64),
    Float(f64),
    /// A name from the declaration's choices.
    Name(&'static str),
}

impl fmt::Display for ParamValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamValue::Int(v) => write!(f, "{v}"),
            ParamValue::Float(v) => write!(f, "{v}"),
            ParamValue::Name(n) => f.write_str(n),
        }
    }
}

/// A parameter: key, type, default and meaning, declared once.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParamDecl {
    pub key: &'static str,
    pub ty: ParamType,
    pub default: ParamValue,
    /// One line: what it is, where its default comes from.
    pub doc: &'static str,
}

impl ParamDecl {
    pub const fn int(key: &'static str, default: u64, min: u64, max: u64, doc: &'static str) -> Self {
        Self {
            key,
            ty: ParamType::Int { min, max },
            default: ParamValue::Int(default),
            doc,
        }
    }

    pub const fn float(key: &'static str, default: f64, min: f64, max: f64, doc: &'static str) -> Self {
        Self {
            key,
            ty: ParamType::Float { min, max },
            default: ParamValue::Float(default),
            doc,
        }
    }

    pub const fn choice(
        key: &'static str,
        default: &'static str,
        choices: &'static [(&'static str, &'static str)],
        doc: &'static str,
    ) -> Self {
        Self {
            key,
            ty: ParamType::Choice(choices),
            default: ParamValue::Name(default),
            doc,
        }
    }

    /// The accepted values in words, e.g. `100..=4294967295` or
    /// `per_call (pages per single-page flush), total (...)`.
    pub fn accepted(&self) -> String {
        let names = |choices: &[(&str, &str)]| {
            choices
                .iter()
                .map(|(n, what)| format!("{n} ({what})"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self.ty {
            ParamType::Int { min, max } => format!("a whole number in {min}..={max}"),
            ParamType::Float { min, max } => format!("a number in {min}..={max}"),
            ParamType::Choice(choices) => names(choices),
            ParamType::ChoiceOrInt { choices, min, max } => {
                format!("{} or a whole number in {min}..={max}", names(choices))
            }
        }
    }

    /// Parses `text` as a value of this parameter.
    pub fn parse_value(&self, text: &str) -> Result<ParamValue, String> {
        let bad = || format!("bad value '{text}' for {}: accepted are {}", self.key, self.accepted());
        let name = |choices: &'static [(&'static str, &'static str)]| {
            choices
                .iter()
                .find(|(n, _)| *n == text)
                .map(|(n, _)| ParamValue::Name(n))
        };
        let int = |min: u64, max: u64| {
            text.parse::<u64>()
                .ok()
                .filter(|v| (min..=max).contains(v))
                .map(ParamValue::Int)
        };
        let value = match self.ty {
            ParamType::Int { min, max } => int(min, max),
            ParamType::Float { min, max } => text
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= min && *v <= max)
                .map(ParamValue::Float),
            ParamType::Choice(choices) => name(choices),
            ParamType::ChoiceOrInt { choices, min, max } => name(choices).or_else(|| int(min, max)),
        };
        value.ok_or_else(bad)
    }
}

/// Parameters given for one owner (a policy), validated against its
/// declarations; the declared default stands for every key not given.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamSet {
    decls: &'static [&'static [ParamDecl]],
    /// In the order given.
    given: Vec<(&'static str, ParamValue)>,
}

impl ParamSet {
    /// Nothing given: every parameter at its default.
    pub fn defaults(decls: &'static [&'static [ParamDecl]]) -> Self {
        Self {
            decls,
            given: Vec::new(),
        }
    }

    /// Parses `key=value,key=value` against `decls`; `owner` names the
    /// policy in errors. An unknown key, a repeated key or a bad value is an
    /// error naming it and what is accepted.
    pub fn parse(owner: &str, decls: &'static [&'static [ParamDecl]], text: &str) -> Result<Self, String> {
        let mut set = Self::defaults(decls);
        for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (key, value) = item
                .split_once('=')
                .ok_or_else(|| format!("policy {owner}: parameter '{item}' must be key=value"))?;
            let (key, value) = (key.trim(), value.trim());
            let decl = set.decl(key).ok_or_else(|| {
                let keys: Vec<&str> = set.decls().map(|d| d.key).collect();
                format!(
                    "policy {owner}: unknown parameter '{key}': accepted parameters are {}",
                    if keys.is_empty() {
                        "none".to_string()
                    } else {
                        keys.join(", ")
                    }
                )
            })?;
            if set.given.iter().any(|(k, _)| *k == decl.key) {
                return Err(format!("policy {owner}: parameter '{key}' given twice"));
            }
            let value = decl.parse_value(value).map_err(|e| format!("policy {owner}: {e}"))?;
            set.given.push((decl.key, value));
        }
        Ok(set)
    }

    /// Every declaration, in declaration order.
    pub fn decls(&self) -> impl Iterator<Item = &'static ParamDecl> {
        self.decls.iter().flat_map(|group| group.iter())
    }

    fn decl(&self, key: &str) -> Option<&'static ParamDecl> {
        self.decls().find(|d| d.key == key)
    }

    /// The parameters given, in the order given.
    pub fn given(&self) -> &[(&'static str, ParamValue)] {
        &self.given
    }

    /// Every declared parameter with the value in force (given or default).
    pub fn resolved(&self) -> Vec<(&'static str, ParamValue)> {
        self.decls().map(|d| (d.key, self.value(d.key))).collect()
    }

    /// The value in force for `key`.
    ///
    /// Panics if `key` is not declared: that is a bug in the caller.
    pub fn value(&self, key: &str) -> ParamValue {
        if let Some((_, v)) = self.given.iter().find(|(k, _)| *k == key) {
            return *v;
        }
        match self.decl(key) {
            Some(decl) => decl.default,
            None => panic!("parameter '{key}' is not declared"),
        }
    }

    /// An `Int` parameter whose declared maximum fits `u32`.
    pub fn u32(&self, key: &str) -> u32 {
        let v = self.u64(key);
        u32::try_from(v).unwrap_or_else(|_| panic!("parameter '{key}' = {v} is declared beyond u32"))
    }

    /// An `Int` parameter.
    pub fn u64(&self, key: &str) -> u64 {
        match self.value(key) {
            ParamValue::Int(v) => v,
            other => panic!("parameter '{key}' is {other:?}, not a whole number"),
        }
    }

    /// A `Float` parameter.
    pub fn f64(&self, key: &str) -> f64 {
        match self.value(key) {
            ParamValue::Float(v) => v,
            other => panic!("parameter '{key}' is {other:?}, not a number"),
        }
    }

    /// A `Choice` parameter's name.
    pub fn name(&self, key: &str) -> &'static str {
        match self.value(key) {
            ParamValue::Name(n) => n,
            other => panic!("parameter '{key}' is {other:?}, not a name"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHOICES: &[(&str, &str)] = &[("stay", "5.6.15"), ("evict", "5.7")];
    const GROUP: &[ParamDecl] = &[
        ParamDecl::int("depth", 1024, 100, 1 << 20, "Pscan"),
        ParamDecl::float("pct", 7.5, 0.0, 100.0, "a share"),
        ParamDecl::choice("pages", "stay", CHOICES, "written pages"),
        ParamDecl {
            key: "scan",
            ty: ParamType::ChoiceOrInt {
                choices: &[("lru_scan_depth", "follows Pscan")],
                min: 1,
                max: 1 << 20,
            },
            default: ParamValue::Name("lru_scan_depth"),
            doc: "user scan",
        },
    ];
    const DECLS: &[&[ParamDecl]] = &[GROUP];

    #[test]
    fn defaults_stand_for_keys_not_given_and_given_values_are_typed() {
        let set = ParamSet::parse("p", DECLS, "pct=12.5, pages=evict,scan=300").unwrap();
        assert_eq!(set.u32("depth"), 1024);
        assert_eq!(set.f64("pct"), 12.5);
        assert_eq!(set.name("pages"), "evict");
        assert_eq!(set.value("scan"), ParamValue::Int(300));
        assert_eq!(set.given().len(), 3);
        let keys: Vec<&str> = set.resolved().iter().map(|(k, _)| *k).collect();
        assert_eq!(keys, ["depth", "pct", "pages", "scan"]);
        assert_eq!(ParamSet::parse("p", DECLS, "").unwrap(), ParamSet::defaults(DECLS));
    }

    #[test]
    fn bad_input_names_the_key_and_what_is_accepted() {
        let err = |text: &str| ParamSet::parse("p", DECLS, text).err().unwrap();
        let e = err("depth=99");
        assert!(e.contains("depth") && e.contains("100..=1048576"), "{e}");
        let e = err("depth=lots");
        assert!(e.contains("bad value 'lots'"), "{e}");
        let e = err("pages=gone");
        assert!(e.contains("stay (5.6.15)") && e.contains("evict (5.7)"), "{e}");
        let e = err("width=3");
        assert!(
            e.contains("unknown parameter 'width'") && e.contains("depth, pct, pages, scan"),
            "{e}"
        );
        let e = err("depth");
        assert!(e.contains("key=value"), "{e}");
        let e = err("depth=200,depth=300");
        assert!(e.contains("given twice"), "{e}");
        let e = err("pct=NaN");
        assert!(e.contains("pct"), "{e}");
        let e = err("scan=0");
        assert!(
            e.contains("lru_scan_depth (follows Pscan) or a whole number in 1..="),
            "{e}"
        );
    }
}
