//! The hyper service: routes a request to the store, a watch or an eviction,
//! and answers Kubernetes JSON (a `Status` on failure).

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{Value, json};

use crate::eviction;
use crate::log::RecordedRequest;
use crate::paths::{Address, Query, Verb};
use crate::resources::ResourceType;
use crate::selector::{FieldSelector, Filter, LabelSelector};
use crate::shared::{Shared, lock};
use crate::status::{self, ApiError};
use crate::store::{PatchKind, Preconditions, ResourceId, Store, Write};
use crate::watch::{self, WatchRequest};

/// The body of every response.
pub(crate) type Body = UnsyncBoxBody<Bytes, Infallible>;

/// Serves one request, logging it.
pub(crate) async fn serve(
    shared: Arc<Shared>,
    request: Request<Incoming>,
) -> Result<Response<Body>, Infallible> {
    let method = request.method().as_str().to_owned();
    let path = request.uri().path().to_owned();
    let raw_query = request.uri().query().unwrap_or_default().to_owned();
    let query = Query::parse(&raw_query);
    let content_type = request
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    let address = Address::parse(&path);
    let verb = address
        .as_ref()
        .and_then(|address| Verb::of(&method, address, query.flag("watch")));
    let fault = lock(&shared.faults).take(&method, &path, verb);
    let response = match fault {
        Some(error) => Err(error),
        None => match &address {
            Some(address) => {
                let context = Context {
                    shared: &shared,
                    query: &query,
                    content_type: content_type.as_deref(),
                };
                context.handle(request, address).await
            }
            None => non_resource(&method, &path),
        },
    };
    let response = response.unwrap_or_else(|error| error_response(&error));
    lock(&shared.log).record(RecordedRequest {
        method,
        path,
        query: raw_query,
        field_manager: query.get("fieldManager").map(str::to_owned),
        content_type,
        status: response.status().as_u16(),
        verb,
        group: address.as_ref().map(|address| address.group.clone()),
        resource: address.as_ref().map(Address::rbac_resource),
    });
    Ok(response)
}

/// What every handler needs to know of the request, besides its body.
struct Context<'a> {
    shared: &'a Arc<Shared>,
    query: &'a Query,
    content_type: Option<&'a str>,
}

/// The resource a request addresses, checked against the served kinds.
struct Target {
    id: ResourceId,
    ty: ResourceType,
    namespace: Option<String>,
    name: Option<String>,
    subresource: Option<String>,
}

impl Target {
    fn resolve(store: &Store, address: &Address) -> Result<Self, ApiError> {
        let id = store
            .resource(&address.group, &address.plural)
            .ok_or_else(ApiError::no_such_path)?;
        let ty = store.resource_type(id).clone();
        let scoped_right = if ty.namespaced {
            address.namespace.is_some() || address.name.is_none()
        } else {
            address.namespace.is_none()
        };
        if ty.version != address.version || !scoped_right {
            return Err(ApiError::no_such_path());
        }
        Ok(Self {
            id,
            ty,
            namespace: address.namespace.clone(),
            name: address.name.clone(),
            subresource: address.subresource.clone(),
        })
    }

    fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    /// Whether the subresource is none (`false`) or `status` (`true`).
    fn status(&self) -> Result<bool, ApiError> {
        match self.subresource.as_deref() {
            None => Ok(false),
            Some("status") if self.ty.status_subresource => Ok(true),
            Some(_) => Err(ApiError::no_such_path()),
        }
    }
}

impl Context<'_> {
    async fn handle(
        &self,
        request: Request<Incoming>,
        address: &Address,
    ) -> Result<Response<Body>, ApiError> {
        let method = request.method().clone();
        let target = self.shared.read(|store| Target::resolve(store, address))?;
        let body = read_body(request.into_body(), self.shared.options.max_body_bytes).await?;
        match (method, target.name.clone()) {
            (Method::GET, _) if self.query.flag("watch") => self.watch(&target),
            (Method::GET, None) => self.list(&target),
            (Method::GET, Some(name)) => {
                target.status()?;
                let object = self
                    .shared
                    .read(|store| store.get(target.id, target.namespace(), &name).cloned())?;
                Ok(json_response(StatusCode::OK, &object))
            }
            (Method::POST, None) if target.subresource.is_none() => {
                let body = parse_json(&body)?;
                let object = self
                    .shared
                    .write(|store| store.create(target.id, target.namespace(), body, false))?;
                Ok(json_response(StatusCode::CREATED, &object))
            }
            (Method::POST, Some(name))
                if target.subresource.as_deref() == Some("eviction")
                    && target.ty.group.is_empty()
                    && target.ty.plural == "pods" =>
            {
                let eviction = if body.is_empty() {
                    json!({})
                } else {
                    parse_json(&body)?
                };
                let namespace = target.namespace().unwrap_or_default();
                self.shared.write(|store| {
                    eviction::evict(store, target.id, namespace, &name, &eviction)
                })?;
                Ok(json_response(
                    StatusCode::CREATED,
                    &status::success(201, None),
                ))
            }
            (Method::PUT, Some(name)) => {
                let write = if target.status()? {
                    Write::Status
                } else {
                    Write::Main
                };
                let body = parse_json(&body)?;
                let object = self.shared.write(|store| {
                    store.update(target.id, target.namespace(), &name, body, write, true)
                })?;
                Ok(json_response(StatusCode::OK, &object))
            }
            (Method::PATCH, Some(name)) => self.patch(&target, &name, &body),
            (Method::DELETE, Some(name)) if target.subresource.is_none() => {
                self.delete(&target, &name, &body)
            }
            (Method::DELETE, None) if target.subresource.is_none() => {
                self.delete_collection(&target, &body)
            }
            (method, _) => Err(ApiError::method_not_allowed(method.as_str())),
        }
    }

    fn filter(&self, target: &Target) -> Result<Filter, ApiError> {
        let labels = LabelSelector::parse(self.query.get("labelSelector").unwrap_or_default())?;
        let mut fields = FieldSelector::parse(self.query.get("fieldSelector").unwrap_or_default())?;
        if let Some(name) = &target.name {
            fields = fields.and(FieldSelector::name(name));
        }
        Ok(Filter {
            namespace: target.namespace.clone(),
            labels,
            fields,
        })
    }

    fn list(&self, target: &Target) -> Result<Response<Body>, ApiError> {
        let filter = self.filter(target)?;
        let (limit, after) = self.paging()?;
        let after = after
            .as_ref()
            .map(|(ns, name)| (ns.as_str(), name.as_str()));
        let (mut items, more, rv) = self.shared.read(|store| {
            let (items, more) = store.list_page(target.id, &filter, after, limit);
            (items, more, store.resource_version())
        });
        let next = if more { items.last().map(key_of) } else { None };
        if !target.ty.custom {
            for item in &mut items {
                if let Some(item) = item.as_object_mut() {
                    item.remove("apiVersion");
                    item.remove("kind");
                }
            }
        }
        let list = json!({
            "apiVersion": target.ty.api_version(),
            "kind": format!("{}List", target.ty.kind),
            "metadata": match next {
                Some(token) => json!({ "resourceVersion": rv.to_string(), "continue": token }),
                None => json!({ "resourceVersion": rv.to_string() }),
            },
            "items": items,
        });
        Ok(json_response(StatusCode::OK, &list))
    }

    /// What `limit` (0 or absent: no limit) and `continue` ask for: the
    /// most items a page may hold, and the key (namespace, name) the page
    /// starts after. The token is the last key served, so a page lists
    /// what is there when it is asked for (a real API server serves every
    /// page from the first page's snapshot).
    fn paging(&self) -> Result<(usize, Option<(String, String)>), ApiError> {
        let limit = match self.query.get("limit").filter(|l| !l.is_empty()) {
            None => usize::MAX,
            Some(limit) => match limit.parse::<usize>() {
                Ok(0) => usize::MAX,
                Ok(limit) => limit,
                Err(_) => return Err(ApiError::bad_request(format!("invalid limit {limit:?}"))),
            },
        };
        let after = match self.query.get("continue").filter(|c| !c.is_empty()) {
            None => None,
            Some(token) => {
                let (namespace, name) = token.split_once('/').ok_or_else(|| {
                    ApiError::bad_request(format!("invalid continue token {token:?}"))
                })?;
                Some((namespace.to_owned(), name.to_owned()))
            }
        };
        Ok((limit, after))
    }

    fn watch(&self, target: &Target) -> Result<Response<Body>, ApiError> {
        let resource_version =
            match self
                .query
                .get("resourceVersion")
                .filter(|rv| !rv.is_empty())
            {
                None => None,
                Some(rv) => Some(rv.parse::<u64>().map_err(|_| {
                    ApiError::bad_request(format!("invalid resourceVersion {rv:?}"))
                })?),
            };
        let timeout = match self.query.get("timeoutSeconds") {
            None => self.shared.options.default_watch_timeout,
            Some(seconds) => Duration::from_secs(seconds.parse().map_err(|_| {
                ApiError::bad_request(format!("invalid timeoutSeconds {seconds:?}"))
            })?),
        };
        let request = WatchRequest {
            resource: target.id,
            filter: self.filter(target)?,
            resource_version,
            send_initial_events: self.query.flag("sendInitialEvents"),
            bookmarks: self.query.flag("allowWatchBookmarks"),
            timeout,
        };
        let lines = watch::stream(Arc::clone(self.shared), request)
            .map(|line| Ok::<_, Infallible>(Frame::data(line)));
        let mut response = Response::new(StreamBody::new(lines).boxed_unsync());
        response
            .headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        Ok(response)
    }

    fn patch(&self, target: &Target, name: &str, body: &Bytes) -> Result<Response<Body>, ApiError> {
        let status = target.status()?;
        let content_type = self.content_type.unwrap_or_default();
        let media_type = content_type.split(';').next().unwrap_or_default().trim();
        let kind = match media_type {
            "application/merge-patch+json" | "application/strategic-merge-patch+json" => {
                PatchKind::Merge
            }
            "application/json-patch+json" => PatchKind::Json,
            "application/apply-patch+yaml" | "application/apply-patch+json" => {
                if self.query.get("fieldManager").is_none_or(str::is_empty) {
                    return Err(ApiError::bad_request(
                        "PATCH with server-side apply requires the fieldManager parameter",
                    ));
                }
                PatchKind::Apply
            }
            _ => return Err(ApiError::unsupported_media_type(content_type)),
        };
        let patch = parse_json(body)?;
        let (object, created) = self.shared.write(|store| {
            store.patch(target.id, target.namespace(), name, kind, &patch, status)
        })?;
        let code = if created {
            StatusCode::CREATED
        } else {
            StatusCode::OK
        };
        Ok(json_response(code, &object))
    }

    fn delete(
        &self,
        target: &Target,
        name: &str,
        body: &Bytes,
    ) -> Result<Response<Body>, ApiError> {
        let options = if body.is_empty() {
            Value::Null
        } else {
            parse_json(body)?
        };
        let deleted = self.shared.write(|store| {
            store.delete(
                target.id,
                target.namespace(),
                name,
                &Preconditions::of(&options),
            )
        })?;
        if !deleted.removed {
            return Ok(json_response(StatusCode::OK, &deleted.object));
        }
        let details = json!({
            "name": name,
            "group": target.ty.group,
            "kind": target.ty.plural,
            "uid": deleted.object.pointer("/metadata/uid"),
        });
        Ok(json_response(
            StatusCode::OK,
            &status::success(200, Some(details)),
        ))
    }

    fn delete_collection(&self, target: &Target, body: &Bytes) -> Result<Response<Body>, ApiError> {
        let options = if body.is_empty() {
            Value::Null
        } else {
            parse_json(body)?
        };
        let preconditions = Preconditions::of(&options);
        let filter = self.filter(target)?;
        let (items, rv) = self.shared.write(|store| {
            let mut items = Vec::new();
            for object in store.list(target.id, &filter) {
                let namespace = crate::store::meta(&object, "namespace").map(str::to_owned);
                let name = crate::store::meta(&object, "name")
                    .unwrap_or_default()
                    .to_owned();
                if let Ok(deleted) =
                    store.delete(target.id, namespace.as_deref(), &name, &preconditions)
                {
                    items.push(deleted.object);
                }
            }
            (items, store.resource_version())
        });
        let list = json!({
            "apiVersion": target.ty.api_version(),
            "kind": format!("{}List", target.ty.kind),
            "metadata": { "resourceVersion": rv.to_string() },
            "items": items,
        });
        Ok(json_response(StatusCode::OK, &list))
    }
}

/// `/version`, the health checks, and 404 for anything else.
fn non_resource(method: &str, path: &str) -> Result<Response<Body>, ApiError> {
    match (method, path) {
        ("GET", "/version") => Ok(json_response(
            StatusCode::OK,
            &json!({
                "major": "1",
                "minor": "34",
                "gitVersion": "v1.34.0",
                "platform": "linux/amd64",
            }),
        )),
        ("GET", "/healthz" | "/livez" | "/readyz") => Ok(Response::new(
            Full::new(Bytes::from_static(b"ok")).boxed_unsync(),
        )),
        _ => Err(ApiError::no_such_path()),
    }
}

/// The continue token naming `item`: its namespace and name.
fn key_of(item: &Value) -> String {
    let meta = &item["metadata"];
    format!(
        "{}/{}",
        meta["namespace"].as_str().unwrap_or_default(),
        meta["name"].as_str().unwrap_or_default()
    )
}

async fn read_body(body: Incoming, limit: usize) -> Result<Bytes, ApiError> {
    match Limited::new(body, limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(error) if error.downcast_ref::<LengthLimitError>().is_some() => {
            Err(ApiError::too_large(limit))
        }
        Err(error) => Err(ApiError::bad_request(format!("reading the body: {error}"))),
    }
}

fn parse_json(body: &Bytes) -> Result<Value, ApiError> {
    serde_json::from_slice(body)
        .map_err(|error| ApiError::bad_request(format!("the body is not valid JSON: {error}")))
}

fn json_response(code: StatusCode, value: &Value) -> Response<Body> {
    let body = serde_json::to_vec(value).unwrap_or_default();
    let mut response = Response::new(Full::new(Bytes::from(body)).boxed_unsync());
    *response.status_mut() = code;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

fn error_response(error: &ApiError) -> Response<Body> {
    let code = StatusCode::from_u16(error.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    json_response(code, &error.to_status())
}
