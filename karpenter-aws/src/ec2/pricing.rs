//! The Pricing API's `GetProducts`, and the parser turning its price-list
//! documents into on-demand prices per instance type.

use std::collections::BTreeMap;

use serde::Deserialize;

/// A `TERM_MATCH` filter of `GetProducts`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PricingFilter {
    /// The product attribute (`regionCode`, `operatingSystem`, ...).
    pub field: String,
    /// The value it must equal.
    pub value: String,
}

impl PricingFilter {
    /// The filter `field == value`.
    pub fn new(field: &str, value: &str) -> Self {
        PricingFilter {
            field: field.to_owned(),
            value: value.to_owned(),
        }
    }
}

/// `GetProducts`' input.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GetProductsInput {
    /// `AmazonEC2`.
    pub service_code: String,
    /// Every filter must match.
    pub filters: Vec<PricingFilter>,
}

/// `GetProductsOutput`: every page's price-list documents, each a JSON
/// string as the SDK returns them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GetProductsOutput {
    /// The documents.
    pub price_list: Vec<String>,
}

/// A price-list document that could not be read.
#[derive(Debug, thiserror::Error)]
#[error("price list document {index}: {reason}")]
pub struct PriceListError {
    /// Its position in the list.
    pub index: usize,
    /// What is wrong.
    pub reason: String,
    /// The JSON error, when it is one.
    #[source]
    pub source: Option<serde_json::Error>,
}

#[derive(Deserialize)]
struct Document {
    product: Product,
    #[serde(default)]
    terms: Terms,
}

#[derive(Deserialize)]
struct Product {
    attributes: Attributes,
}

#[derive(Deserialize)]
struct Attributes {
    #[serde(rename = "instanceType")]
    instance_type: String,
}

#[derive(Default, Deserialize)]
struct Terms {
    #[serde(rename = "OnDemand", default)]
    on_demand: BTreeMap<String, Term>,
}

#[derive(Deserialize)]
struct Term {
    #[serde(rename = "priceDimensions", default)]
    price_dimensions: BTreeMap<String, Dimension>,
}

#[derive(Deserialize)]
struct Dimension {
    #[serde(rename = "pricePerUnit", default)]
    price_per_unit: BTreeMap<String, String>,
}

/// The on-demand price per hour of each instance type in `price_list`
/// (`GetProducts` documents): the first non-zero USD (or, in China, CNY)
/// price of the type's on-demand terms. A type whose terms hold no such
/// price is left out, as upstream leaves it; a document that is not a
/// price list is an error naming it.
pub fn on_demand_prices(price_list: &[String]) -> Result<BTreeMap<String, f64>, PriceListError> {
    let mut prices = BTreeMap::new();
    for (index, text) in price_list.iter().enumerate() {
        let document: Document = serde_json::from_str(text).map_err(|source| PriceListError {
            index,
            reason: "not a price list document".to_owned(),
            source: Some(source),
        })?;
        let units = document
            .terms
            .on_demand
            .values()
            .flat_map(|term| term.price_dimensions.values())
            .flat_map(|dimension| {
                ["USD", "CNY"]
                    .into_iter()
                    .filter_map(|currency| dimension.price_per_unit.get(currency))
            });
        let mut found = None;
        for unit in units {
            let price: f64 = unit.parse().map_err(|_| PriceListError {
                index,
                reason: format!("price {unit:?} is not a number"),
                source: None,
            })?;
            if price > 0.0 {
                found = Some(price);
                break;
            }
        }
        if let Some(price) = found {
            prices.insert(document.product.attributes.instance_type, price);
        }
    }
    Ok(prices)
}
/// A price-list document pricing `instance_type` at `price` per hour in
/// `currency`, shaped as `GetProducts` returns them.
pub(crate) fn price_document(
    region: &str,
    instance_type: &str,
    price: f64,
    currency: &str,
) -> String {
    let sku = format!("{region}.{instance_type}");
    serde_json::json!({
        "product": {
            "productFamily": "Compute Instance",
            "attributes": {
                "instanceType": instance_type,
                "regionCode": region,
                "operatingSystem": "Linux",
                "tenancy": "Shared",
                "preInstalledSw": "NA",
                "capacitystatus": "Used",
            },
            "sku": sku,
        },
        "terms": {"OnDemand": {format!("{sku}.JRTCKXETXF"): {"priceDimensions": {
            format!("{sku}.JRTCKXETXF.6YS6EN2CT7"): {
                "unit": "Hrs",
                "pricePerUnit": {currency: format!("{price}")},
            }
        }}}},
    })
    .to_string()
}
