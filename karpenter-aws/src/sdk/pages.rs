//! [`Pages`]: following a describe call's `NextToken`, up to a cap.

use std::future::Future;

use crate::ec2::{Ec2Error, Operation};

/// Where a paginated call is: the token for the next request, and how many
/// pages were read.
#[derive(Debug)]
struct Pages {
    operation: Operation,
    max_pages: usize,
    read: usize,
    token: Option<String>,
}

impl Pages {
    /// The first page of `operation`, reading at most `max_pages`.
    fn new(operation: Operation, max_pages: usize) -> Self {
        Pages {
            operation,
            max_pages: max_pages.max(1),
            read: 0,
            token: None,
        }
    }

    /// The token to send with the next request (`None` for the first).
    fn token(&mut self) -> Option<String> {
        self.token.take()
    }

    /// Records a page answered with `next_token`: whether another page
    /// follows. An empty token ends the list, as AWS ends it.
    ///
    /// # Errors
    ///
    /// [`Ec2Error::PageLimit`] when another page follows the last one the
    /// cap allows.
    fn more(&mut self, next_token: Option<&str>) -> Result<bool, Ec2Error> {
        self.read += 1;
        let Some(token) = next_token.filter(|t| !t.is_empty()) else {
            return Ok(false);
        };
        if self.read >= self.max_pages {
            return Err(Ec2Error::PageLimit {
                operation: self.operation,
                pages: self.read,
            });
        }
        self.token = Some(token.to_owned());
        Ok(true)
    }
}

/// Every item of a paginated call: `call` sends one request with the token
/// it is given and answers that page's items and next token.
///
/// # Errors
///
/// The first page's error, or [`Ec2Error::PageLimit`] past `max_pages`.
pub(crate) async fn every_page<T, F, Fut>(
    operation: Operation,
    max_pages: usize,
    mut call: F,
) -> Result<Vec<T>, Ec2Error>
where
    F: FnMut(Option<String>) -> Fut,
    Fut: Future<Output = Result<(Vec<T>, Option<String>), Ec2Error>>,
{
    let mut pages = Pages::new(operation, max_pages);
    let mut items = Vec::new();
    loop {
        let (page, next) = call(pages.token()).await?;
        items.extend(page);
        if !pages.more(next.as_deref())? {
            return Ok(items);
        }
    }
}
