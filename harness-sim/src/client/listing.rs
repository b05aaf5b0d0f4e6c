//! tools/list and prompts/list with each client's paging.
//!
//! Local (`sendRequestPaginated`): params `{...initialParams, cursor}`, so the
//! first page is `{}`, and the loop goes on **while `nextCursor !== undefined`**:
//! `nextCursor: null` gives `{"cursor": null}` and VS Code lists forever (R4).
//! The simulator ends such a loop after a bound and reports it. Pages are
//! event-driven: a list change starts a new list at once, as VS Code does.
//! Copilot (rmcp `list_all_tools`): one page after the other, `_meta` with the
//! progress token counter, no `cursor` key on the first page, and a null
//! `nextCursor` ends the list (an `Option` in rmcp).

use serde::Serialize;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::frames;
use super::schema_check::{self, Blocked};
use super::{EventKind, Pending, SimClient, SimError};

/// Which list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ListKind {
    /// tools/list.
    Tools,
    /// prompts/list.
    Prompts,
}

impl ListKind {
    /// The method.
    pub fn method(self) -> &'static str {
        match self {
            ListKind::Tools => "tools/list",
            ListKind::Prompts => "prompts/list",
        }
    }

    /// The result key, also the name in the log.
    pub fn key(self) -> &'static str {
        match self {
            ListKind::Tools => "tools",
            ListKind::Prompts => "prompts",
        }
    }
}

/// A complete list as the client shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct Listing {
    /// The items the client shows (tools after the R6 checks on the Local harness).
    pub items: Vec<Value>,
    /// The number of pages.
    pub pages: usize,
    /// Local: tools omitted by R6 (a).
    pub omitted: Vec<String>,
    /// Local: VS Code's log line for the omitted tools.
    pub log_line: Option<String>,
    /// Local: the tool whose array schema stops all tools, R6 (b).
    pub blocked: Option<Blocked>,
}

impl Listing {
    /// The names of the items.
    pub fn names(&self) -> Vec<String> {
        self.items.iter().map(schema_check::tool_name).collect()
    }
}

/// Why a list did not complete.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ListFailure {
    /// An error response, shown as VS Code shows it.
    #[error("{method} failed: {display}")]
    Rpc {
        /// The method.
        method: String,
        /// `MPC <code>: <message>`.
        display: String,
    },
    /// The server keeps answering the same `nextCursor` (typically `null`):
    /// the Local harness asks for the next page forever (R4).
    #[error(
        "{method} never ends: the server answered nextCursor {cursor} {repeats} times in a row; VS Code asks for the next page while nextCursor is not undefined and keeps listing forever (R4)"
    )]
    CursorLoop {
        /// The method.
        method: String,
        /// The repeated cursor as JSON text.
        cursor: String,
        /// How many pages in a row had it.
        repeats: usize,
        /// Pages so far.
        pages: usize,
    },
    /// More pages than the bound.
    #[error("{method} did not end after {pages} pages")]
    TooManyPages {
        /// The method.
        method: String,
        /// Pages so far.
        pages: usize,
    },
    /// A result the client cannot read.
    #[error("{method}: {message}")]
    Invalid {
        /// The method.
        method: String,
        /// Why.
        message: String,
    },
    /// The Local harness dropped the request after a server cancel with its id.
    #[error("{method} was dropped after a notifications/cancelled of the server with its id")]
    Dropped {
        /// The method.
        method: String,
    },
}

/// The state of one Local list, carried by each page request.
#[derive(Debug)]
pub(crate) struct Paging {
    kind: ListKind,
    generation: u64,
    items: Vec<Value>,
    pages: usize,
    last_cursor: Option<Value>,
    repeats: usize,
}

/// Both lists.
#[derive(Debug, Default)]
pub(crate) struct Lists {
    pub(crate) tools: ListState,
    pub(crate) prompts: ListState,
}

/// One list: the newest started and finished generations and what is shown.
#[derive(Debug, Default)]
pub(crate) struct ListState {
    started: u64,
    finished: u64,
    pub(crate) shown: Vec<Value>,
    pub(crate) last: Option<Result<Listing, ListFailure>>,
}

impl Lists {
    fn state(&mut self, kind: ListKind) -> &mut ListState {
        match kind {
            ListKind::Tools => &mut self.tools,
            ListKind::Prompts => &mut self.prompts,
        }
    }

    /// A page request was dropped: its list ends with a failure.
    pub(crate) fn fail_dropped(&mut self, paging: Paging) {
        let state = self.state(paging.kind);
        if paging.generation >= state.finished {
            state.finished = paging.generation;
            state.last = Some(Err(ListFailure::Dropped {
                method: paging.kind.method().into(),
            }));
        }
    }

    /// Whether the newest list of `kind` has finished.
    pub(crate) fn idle(&self, kind: ListKind) -> bool {
        match kind {
            ListKind::Tools => self.tools.finished >= self.tools.started,
            ListKind::Prompts => self.prompts.finished >= self.prompts.started,
        }
    }
}

impl SimClient {
    /// Lists the tools with the profile's paging. On the Local harness the R6
    /// checks run on the complete list; a cursor loop is a [`ListFailure`].
    pub async fn list_tools(&mut self) -> Result<Listing, SimError> {
        self.list(ListKind::Tools).await
    }

    /// Lists the prompts with the profile's paging.
    pub async fn list_prompts(&mut self) -> Result<Listing, SimError> {
        self.list(ListKind::Prompts).await
    }

    /// The outcome of the newest complete tools list.
    pub fn last_tools_listing(&self) -> Option<&Result<Listing, ListFailure>> {
        self.lists.tools.last.as_ref()
    }

    async fn list(&mut self, kind: ListKind) -> Result<Listing, SimError> {
        if self.profile.is_local() {
            let generation = self.begin_local_list(kind).await?;
            self.wait_local_list(kind, generation).await
        } else {
            self.list_sequential(kind).await
        }
    }

    /// Local: sends the first page of a new list; returns its generation.
    pub(crate) async fn begin_local_list(&mut self, kind: ListKind) -> Result<u64, SimError> {
        let state = self.lists.state(kind);
        state.started += 1;
        let paging = Paging {
            kind,
            generation: state.started,
            items: Vec::new(),
            pages: 0,
            last_cursor: None,
            repeats: 0,
        };
        self.send_local_page(paging, None).await?;
        Ok(self.lists.state(kind).started)
    }

    async fn send_local_page(
        &mut self,
        paging: Paging,
        cursor: Option<Value>,
    ) -> Result<(), SimError> {
        let id = self.take_id();
        let method = paging.kind.method();
        let params = match cursor {
            None => json!({}),
            Some(cursor) => json!({"cursor": cursor}),
        };
        self.pending.insert(id, Pending::ListPage(paging));
        self.peer.send(&frames::request(id, method, params)).await?;
        Ok(())
    }

    /// Local: waits until the list `generation` (or a newer one) of `kind` finished.
    pub(crate) async fn wait_local_list(
        &mut self,
        kind: ListKind,
        generation: u64,
    ) -> Result<Listing, SimError> {
        let deadline = Instant::now() + self.options.request_timeout;
        loop {
            let state = self.lists.state(kind);
            if state.finished >= generation {
                return match state.last.clone() {
                    Some(Ok(listing)) => Ok(listing),
                    Some(Err(failure)) => Err(SimError::List(failure)),
                    None => Err(SimError::NotStarted),
                };
            }
            if Instant::now() >= deadline {
                return Err(SimError::Timeout {
                    method: kind.method().into(),
                    id: -1,
                    after: self.options.request_timeout,
                });
            }
            self.pump_once(deadline).await?;
        }
    }

    /// Local: waits until no list of `kind` is in flight (VS Code's `awaitToolRefresh`).
    pub(crate) async fn await_refresh(&mut self, kind: ListKind) -> Result<(), SimError> {
        let deadline = Instant::now() + self.options.request_timeout;
        while !self.lists.idle(kind) && Instant::now() < deadline {
            self.pump_once(deadline).await?;
        }
        Ok(())
    }

    pub(crate) async fn on_list_page(
        &mut self,
        mut paging: Paging,
        frame: Value,
    ) -> Result<(), SimError> {
        let method = paging.kind.method();
        if let Some(error) = frame.get("error") {
            let display = error_display(error);
            self.finish_list(
                paging,
                Err(ListFailure::Rpc {
                    method: method.into(),
                    display,
                }),
            );
            return Ok(());
        }
        let key = paging.kind.key();
        let Some(items) = frame
            .get("result")
            .and_then(|r| r.get(key))
            .and_then(Value::as_array)
        else {
            self.finish_list(
                paging,
                Err(ListFailure::Invalid {
                    method: method.into(),
                    message: format!("the result has no {key} array"),
                }),
            );
            return Ok(());
        };
        paging.items.extend(items.iter().cloned());
        paging.pages += 1;
        // `nextCursor !== undefined`: a present null continues, as in VS Code.
        let Some(cursor) = frame
            .get("result")
            .and_then(|r| r.get("nextCursor"))
            .cloned()
        else {
            self.finish_list(paging, Ok(()));
            return Ok(());
        };
        if paging.last_cursor.as_ref() == Some(&cursor) {
            paging.repeats += 1;
        } else {
            paging.last_cursor = Some(cursor.clone());
            paging.repeats = 1;
        }
        if paging.repeats >= self.options.cursor_loop_bound {
            let failure = ListFailure::CursorLoop {
                method: method.into(),
                cursor: cursor.to_string(),
                repeats: paging.repeats,
                pages: paging.pages,
            };
            self.finish_list(paging, Err(failure));
            return Ok(());
        }
        if paging.pages >= self.options.max_pages {
            let failure = ListFailure::TooManyPages {
                method: method.into(),
                pages: paging.pages,
            };
            self.finish_list(paging, Err(failure));
            return Ok(());
        }
        self.send_local_page(paging, Some(cursor)).await
    }

    /// Ends a Local list: applies it when it is the newest to finish.
    fn finish_list(&mut self, paging: Paging, outcome: Result<(), ListFailure>) {
        let kind = paging.kind;
        if paging.generation < self.lists.state(kind).finished {
            return;
        }
        let outcome = outcome.map(|()| {
            if kind == ListKind::Tools {
                let verdict = schema_check::check_tools(&paging.items);
                Listing {
                    items: verdict.visible,
                    pages: paging.pages,
                    omitted: verdict.omitted,
                    log_line: verdict.log_line,
                    blocked: verdict.blocked,
                }
            } else {
                Listing {
                    items: paging.items,
                    pages: paging.pages,
                    omitted: Vec::new(),
                    log_line: None,
                    blocked: None,
                }
            }
        });
        self.log_listing(kind, &outcome);
        let state = self.lists.state(kind);
        state.finished = paging.generation;
        if let Ok(listing) = &outcome {
            state.shown = listing.items.clone();
        }
        state.last = Some(outcome);
    }

    fn log_listing(&mut self, kind: ListKind, outcome: &Result<Listing, ListFailure>) {
        match outcome {
            Ok(listing) => {
                if let Some(log_line) = &listing.log_line {
                    self.log(EventKind::SchemasOmitted {
                        tools: listing.omitted.clone(),
                        log_line: log_line.clone(),
                    });
                }
                if let Some(blocked) = &listing.blocked {
                    self.log(EventKind::ToolsBlocked {
                        tool: blocked.tool.clone(),
                        pointer: blocked.pointer.clone(),
                        message: blocked.message(),
                    });
                }
                self.log(EventKind::Listed {
                    list: kind.key().into(),
                    names: listing.names(),
                    pages: listing.pages,
                });
            }
            Err(failure) => self.log(EventKind::ListFailed {
                list: kind.key().into(),
                message: failure.to_string(),
            }),
        }
    }

    /// Copilot (and the modern path): pages one after the other.
    pub(crate) async fn list_sequential(&mut self, kind: ListKind) -> Result<Listing, SimError> {
        if kind == ListKind::Tools {
            self.tools_stale = false;
        }
        let method = kind.method();
        let mut items = Vec::new();
        let mut pages = 0;
        let mut cursor: Option<String> = None;
        let outcome = loop {
            let id = self.take_id();
            let token = self.take_progress();
            let meta = if self.is_modern() {
                frames::with_progress_token(&self.modern_meta, token)
            } else {
                json!({"progressToken": token})
            };
            let mut params = json!({"_meta": meta});
            if let Some(cursor) = &cursor {
                params["cursor"] = json!(cursor);
            }
            self.send_awaited(id, method, frames::sorted(params))
                .await?;
            let response = self.wait_response(id, self.options.request_timeout).await?;
            if let Some(error) = response.get("error") {
                break Err(ListFailure::Rpc {
                    method: method.into(),
                    display: error_display(error),
                });
            }
            let result = response.get("result").cloned().unwrap_or_default();
            let Some(page) = result.get(kind.key()).and_then(Value::as_array) else {
                break Err(ListFailure::Invalid {
                    method: method.into(),
                    message: format!("the result has no {} array", kind.key()),
                });
            };
            items.extend(page.iter().cloned());
            pages += 1;
            match result.get("nextCursor") {
                None | Some(Value::Null) => {
                    break Ok(Listing {
                        items,
                        pages,
                        omitted: Vec::new(),
                        log_line: None,
                        blocked: None,
                    });
                }
                Some(Value::String(next)) => cursor = Some(next.clone()),
                Some(other) => {
                    break Err(ListFailure::Invalid {
                        method: method.into(),
                        message: format!("nextCursor is not a string: {other}"),
                    });
                }
            }
            if pages >= self.options.max_pages {
                break Err(ListFailure::TooManyPages {
                    method: method.into(),
                    pages,
                });
            }
        };
        self.log_listing(kind, &outcome);
        let state = self.lists.state(kind);
        state.started += 1;
        state.finished = state.started;
        if let Ok(listing) = &outcome {
            state.shown = listing.items.clone();
        }
        state.last = Some(outcome.clone());
        outcome.map_err(SimError::List)
    }
}

/// `MPC <code>: <message>` of an error object.
pub(crate) fn error_display(error: &Value) -> String {
    let code = error.get("code").and_then(Value::as_i64).unwrap_or(0);
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or_default();
    frames::mpc_error(code, message)
}
