//! The price list (`cephplan design --prices FILE`): the user's unit prices, each with its
//! currency, date and source. cephplan ships no prices and invents none; without a price
//! list the design objective is power, then node count.
//!
//! Format version 1:
//! ```toml
//! schema_version = 1
//! [[price]]
//! part = "drive.micron-7500-pro-15.36tb"   # cpu.<name>, drive.<name>, nic.<name>, chassis.<name>
//! unit_price = 1234.0
//! currency = "EUR"
//! date = "2026-11-30"
//! source = "quote 4711 from our reseller"
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::spec::{error_at, toml_error_in, FileKind, SpecError, SpecErrorKind};

/// The price-list format version this build reads.
pub const PRICES_SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriceListSpec {
    pub schema_version: u32,
    #[serde(rename = "price", default)]
    pub prices: Vec<PriceSpec>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriceSpec {
    /// `cpu.<name>`, `drive.<name>`, `nic.<name>` or `chassis.<name>`.
    pub part: String,
    pub unit_price: f64,
    pub currency: String,
    pub date: String,
    pub source: String,
}

/// The highest unit price taken (10⁹ per part, in any currency): above, the figure is a
/// slip, and sums of such prices lose every cheaper part's digits or overflow to ∞.
pub const MAX_UNIT_PRICE: f64 = 1e9;

/// A validated price list: one currency, one price per part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PriceList {
    pub currency: String,
    /// Part key (`drive.<name>`) → unit price.
    pub unit_price: BTreeMap<String, f64>,
    /// Where each entry was read: the file (or description) that errors name.
    #[serde(skip)]
    pub origin: String,
    /// Each entry's part and its location (line, column) in the file, in file order.
    #[serde(skip)]
    pub entries: Vec<PriceEntryAt>,
}

/// A price entry's part and where it stands, for errors found against the requirements.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PriceEntryAt {
    pub part: String,
    pub line: Option<usize>,
    pub column: Option<usize>,
}

impl PriceList {
    pub fn get(&self, part: &str) -> Option<f64> {
        self.unit_price.get(part).copied()
    }

    /// Parses and validates price-list text; errors carry `origin`, line and field.
    pub fn parse(text: &str, origin: &str) -> Result<Self, SpecError> {
        let spec: PriceListSpec =
            toml::from_str(text).map_err(|e| toml_error_in(text, origin, &e, FileKind::Prices))?;
        let at = |i: Option<usize>, f: &str, problem: String, fix: &str| {
            let field = match i {
                Some(i) => format!("price[{i}].{f}"),
                None => f.to_string(),
            };
            let path: Vec<&str> = field.split('.').collect();
            error_at(
                text,
                origin,
                &path,
                field.clone(),
                SpecErrorKind::Invalid {
                    problem,
                    fix: fix.to_string(),
                },
            )
        };
        if spec.schema_version != PRICES_SCHEMA_VERSION {
            return Err(at(
                None,
                "schema_version",
                format!("schema_version {} is not supported", spec.schema_version),
                "set schema_version = 1",
            ));
        }
        if spec.prices.is_empty() {
            return Err(at(
                None,
                "price",
                "no prices".into(),
                "add [[price]] tables (part, unit_price, currency, date, source)",
            ));
        }
        let currency = spec.prices[0].currency.trim().to_string();
        let mut unit_price = BTreeMap::new();
        for (i, p) in spec.prices.iter().enumerate() {
            let kind = p.part.split('.').next().unwrap_or("");
            if !matches!(kind, "cpu" | "drive" | "nic" | "chassis") || !p.part.contains('.') {
                return Err(at(
                    Some(i),
                    "part",
                    format!("part \"{}\"", p.part),
                    "name the part as cpu.<name>, drive.<name>, nic.<name> or chassis.<name>",
                ));
            }
            if !(p.unit_price.is_finite() && (0.0..=MAX_UNIT_PRICE).contains(&p.unit_price)) {
                return Err(at(
                    Some(i),
                    "unit_price",
                    format!("unit_price = {} for \"{}\"", p.unit_price, p.part),
                    "give the price of one part, from 0 to 10⁹ (1,000,000,000) in the list's currency",
                ));
            }
            if p.currency.trim() != currency || currency.is_empty() {
                return Err(at(
                    Some(i),
                    "currency",
                    format!(
                        "currency \"{}\" differs from the first entry's \"{currency}\"",
                        p.currency
                    ),
                    "give every price in one currency (convert them first)",
                ));
            }
            for (f, v) in [("date", &p.date), ("source", &p.source)] {
                if v.trim().is_empty() {
                    return Err(at(
                        Some(i),
                        f,
                        format!("{f} is empty"),
                        "say when and where the price was quoted",
                    ));
                }
            }
            if unit_price.insert(p.part.clone(), p.unit_price).is_some() {
                return Err(at(
                    Some(i),
                    "part",
                    format!("\"{}\" is priced twice", p.part),
                    "keep one price per part",
                ));
            }
        }
        let entries = spec
            .prices
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let e = at(Some(i), "part", String::new(), "");
                PriceEntryAt {
                    part: p.part.clone(),
                    line: e.line,
                    column: e.column,
                }
            })
            .collect();
        Ok(Self {
            currency,
            unit_price,
            origin: origin.to_string(),
            entries,
        })
    }

    /// Checks that every entry prices a part the search knows: a catalogue (or inline)
    /// part, or a chassis of the requirements. A name that matches none is a typo whose
    /// price would go unused while the part it meant is reported unpriced.
    pub fn check_parts(
        &self,
        cat: &crate::spec::Catalogue,
        chassis: &[String],
    ) -> Result<(), SpecError> {
        for (i, e) in self.entries.iter().enumerate() {
            let (kind, name) = e.part.split_once('.').unwrap_or(("", &e.part));
            let known: Vec<String> = match kind {
                "cpu" => cat.cpu.keys().cloned().collect(),
                "drive" => cat.drive.keys().cloned().collect(),
                "nic" => cat.nic.keys().cloned().collect(),
                _ => chassis.to_vec(),
            };
            if known.iter().any(|k| k == name) {
                continue;
            }
            let closest = crate::spec::catalogue::closest(name, known.iter());
            let whose = if kind == "chassis" {
                "the requirements' chassis"
            } else {
                "the catalogue"
            };
            return Err(SpecError {
                origin: self.origin.clone(),
                line: e.line,
                column: e.column,
                field: format!("price[{i}].part"),
                kind: Box::new(SpecErrorKind::Invalid {
                    problem: format!(
                        "\"{}\" is not in {whose}, so its price would go unused",
                        e.part
                    ),
                    fix: if closest.is_empty() {
                        format!("remove the entry, or add the {kind} to {whose}")
                    } else {
                        format!(
                            "correct the name (closest in {whose}: {}), or remove the entry",
                            closest
                                .iter()
                                .map(|c| format!("{kind}.{c}"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    },
                }),
            });
        }
        Ok(())
    }

    /// Reads a price-list file.
    pub fn load(path: &Path) -> Result<Self, SpecError> {
        let text = std::fs::read_to_string(path).map_err(|e| SpecError {
            origin: path.display().to_string(),
            line: None,
            column: None,
            field: String::new(),
            kind: Box::new(SpecErrorKind::Io(format!(
                "{e}; {}",
                crate::io::read_remedy(&e)
            ))),
        })?;
        Self::parse(&text, &path.display().to_string())
    }
}
