//! `DescribeSpotPriceHistory`: the current spot price per (type, zone), in
//! the AWS SDK's names.

use jiff::Timestamp;

/// `DescribeSpotPriceHistory`' input.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DescribeSpotPriceHistoryInput {
    /// The types (all when empty).
    pub instance_types: Vec<String>,
    /// `Linux/UNIX`, `Linux/UNIX (Amazon VPC)`.
    pub product_descriptions: Vec<String>,
    /// The earliest price wanted; upstream asks for `now` (the current
    /// price).
    pub start_time: Option<Timestamp>,
}

/// One spot price.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SpotPrice {
    /// The type.
    pub instance_type: String,
    /// The zone's name.
    pub availability_zone: String,
    /// The product description.
    pub product_description: String,
    /// Per hour (the SDK's string, parsed).
    pub spot_price: f64,
    /// Since when.
    pub timestamp: Timestamp,
}

/// `DescribeSpotPriceHistoryOutput`: every page.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DescribeSpotPriceHistoryOutput {
    /// The prices.
    pub spot_price_history: Vec<SpotPrice>,
}
