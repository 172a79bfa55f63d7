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

use crate::spec::{error_at, toml_error, SpecError, SpecErrorKind};

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

/// A validated price list: one currency, one price per part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PriceList {
    pub currency: String,
    /// Part key (`drive.<name>`) → unit price.
    pub unit_price: BTreeMap<String, f64>,
}

impl PriceList {
    pub fn get(&self, part: &str) -> Option<f64> {
        self.unit_price.get(part).copied()
    }

    /// Parses and validates price-list text; errors carry `origin`, line and field.
    pub fn parse(text: &str, origin: &str) -> Result<Self, SpecError> {
        let spec: PriceListSpec = toml::from_str(text).map_err(|e| toml_error(text, origin, &e))?;
        let at = |i: Option<usize>, f: &str, problem: String, fix: &str| {
            let field = match i {
                Some(i) => format!("price[{i}].{f}"),
                None => f.to_string(),
            };
            let path: Vec<&str> = if i.is_some() { vec!["price"] } else { vec![f] };
            error_at(
                text,
                origin,
                &path,
                field,
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
            if !(p.unit_price.is_finite() && p.unit_price >= 0.0) {
                return Err(at(
                    Some(i),
                    "unit_price",
                    format!("unit_price = {}", p.unit_price),
                    "give a price ≥ 0",
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
        Ok(Self {
            currency,
            unit_price,
        })
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
