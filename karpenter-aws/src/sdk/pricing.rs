//! The Pricing API's `GetProducts` through `aws-sdk-pricing`, and the
//! region whose endpoint serves a region's prices.

use aws_sdk_pricing::types::{Filter, FilterType};

use super::error::sdk_error;
use super::pages::every_page;
use crate::ec2::{Ec2Error, GetProductsInput, GetProductsOutput, Operation};

/// The page size asked of `GetProducts` (its maximum).
const PRODUCTS_PAGE: i32 = 100;

/// The region whose Pricing API endpoint answers for `region`, as upstream
/// picks it: the API is served from a few regions only.
pub fn pricing_region(region: &str) -> &'static str {
    if region.starts_with("ap-") {
        "ap-south-1"
    } else if region.starts_with("cn-") {
        "cn-northwest-1"
    } else if region.starts_with("eu-") {
        "eu-central-1"
    } else {
        "us-east-1"
    }
}

/// Every page of `GetProducts` for `input`, at most `max_pages` of them.
pub(crate) async fn get_products(
    client: &aws_sdk_pricing::Client,
    max_pages: usize,
    input: GetProductsInput,
) -> Result<GetProductsOutput, Ec2Error> {
    let op = Operation::GetProducts;
    let mut filters = Vec::with_capacity(input.filters.len());
    for f in input.filters {
        let filter = Filter::builder()
            .r#type(FilterType::TermMatch)
            .field(f.field)
            .value(f.value)
            .build()
            .map_err(|e| Ec2Error::Client {
                operation: op,
                source: Box::new(e),
            })?;
        filters.push(filter);
    }
    let price_list = every_page(op, max_pages, |token| {
        let request = client
            .get_products()
            .service_code(input.service_code.clone())
            .set_filters(Some(filters.clone()))
            .format_version("aws_v1")
            .max_results(PRODUCTS_PAGE)
            .set_next_token(token);
        async move {
            let page = request.send().await.map_err(|e| sdk_error(op, e))?;
            let next = page.next_token().map(str::to_owned);
            Ok((page.price_list().to_vec(), next))
        }
    })
    .await?;
    Ok(GetProductsOutput { price_list })
}
