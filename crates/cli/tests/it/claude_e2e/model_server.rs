//! A scripted stand-in for the Anthropic Messages API on 127.0.0.1, for driving
//! the real Claude Code CLI (`ANTHROPIC_BASE_URL=http://127.0.0.1:<port>`) and
//! pi; it also speaks the Gemini API's `generateContent` /
//! `streamGenerateContent` for Gemini CLI (`GOOGLE_GEMINI_BASE_URL`), where the
//! scripted call is `run_shell_command` and comes back as a `functionResponse`,
//! and the OpenAI Responses API (`POST /v1/responses`, streamed) for Codex CLI
//! (a custom model provider with `wire_api = "responses"`), where the scripted
//! call is Codex's shell tool `exec_command` and comes back as a
//! `function_call_output`.
//!
//! The script: a conversation whose last user message carries no `tool_result`
//! and that offers the `Bash` tool gets one `tool_use` block calling `Bash` with
//! the fixed command (stop reason `tool_use`); once the tool result comes back it
//! gets a short text and `end_turn`. Any other `/v1/messages` request (a side
//! query without tools) gets a short text. `count_tokens` gets a count; every
//! other path a 404. Every request is logged for the assertions and for the
//! failure report.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;

use serde_json::{Value, json};

/// The id of the scripted tool call.
pub const TOOL_USE_ID: &str = "toolu_portcullis_e2e_01";

/// The id of the same call made again when the prompt asks for it
/// ([`RETRY_PROMPT`]): a resumed session's second attempt.
pub const RETRY_TOOL_USE_ID: &str = "toolu_portcullis_e2e_02";

/// The prompt that makes the server call the scripted command again.
pub const RETRY_PROMPT: &str = "Run the scripted command again.";

/// The `call_id` of the scripted Responses API function call.
pub const CALL_ID: &str = "call_portcullis_e2e_01";

/// One request the server received.
#[derive(Clone, Debug)]
pub struct Logged {
    pub method: String,
    pub target: String,
    /// The JSON body (`Null` when empty or not JSON).
    pub body: Value,
    /// What the server answered, in a few words.
    pub answer: String,
}

impl Logged {
    /// The path without the query string.
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or("")
    }
}

/// The server: it runs on its own threads until the test process ends.
pub struct ModelServer {
    pub port: u16,
    log: Arc<Mutex<Vec<Logged>>>,
}

impl ModelServer {
    /// Starts a server whose scripted tool call runs `command` with the Bash tool.
    pub fn start(command: &str) -> ModelServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let port = listener.local_addr().expect("local address").port();
        let log = Arc::new(Mutex::new(Vec::new()));
        let shared = Arc::clone(&log);
        let command = command.to_string();
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let log = Arc::clone(&shared);
                let command = command.clone();
                thread::spawn(move || {
                    // A broken connection only loses that request; the log shows it.
                    let _ = serve(stream, &command, &log);
                });
            }
        });
        ModelServer { port, log }
    }

    /// The base URL for `ANTHROPIC_BASE_URL`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Logged> {
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// The `/v1/messages` requests so far (not `count_tokens`).
    pub fn message_requests(&self) -> Vec<Logged> {
        self.requests()
            .into_iter()
            .filter(|r| r.method == "POST" && r.path() == "/v1/messages")
            .collect()
    }

    /// A readable summary of every request, for failure messages.
    pub fn summary(&self) -> String {
        let mut out = String::new();
        for r in self.requests() {
            let last = match r.path() {
                "/v1/responses" => last_input_item(&r.body),
                _ => last_user_content(&r.body),
            };
            let mut last = last.to_string();
            if last.len() > 600 {
                let mut cut = 600;
                while !last.is_char_boundary(cut) {
                    cut -= 1;
                }
                last.truncate(cut);
                last.push('…');
            }
            out.push_str(&format!(
                "  {} {} → {} (stream: {}, tools: {}, last user content or input item: {last})\n",
                r.method,
                r.target,
                r.answer,
                r.body["stream"],
                tool_names(&r.body).join(","),
            ));
        }
        if out.is_empty() {
            out.push_str("  (no requests)\n");
        }
        out
    }
}

/// The names of the tools a request offers.
pub fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .filter_map(|t| t["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The content of the last user message (`Null` when there is none).
pub fn last_user_content(body: &Value) -> &Value {
    body["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .map(|m| &m["content"])
        .unwrap_or(&Value::Null)
}

/// The `tool_result` blocks of the last user message.
pub fn tool_results(body: &Value) -> Vec<Value> {
    last_user_content(body)
        .as_array()
        .map(|c| {
            c.iter()
                .filter(|b| b["type"] == "tool_result")
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

/// A tool result's text, whether its content is a string or text blocks.
pub fn tool_result_text(result: &Value) -> String {
    match &result["content"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

struct Request {
    method: String,
    target: String,
    body: Vec<u8>,
}

fn serve(stream: TcpStream, command: &str, log: &Mutex<Vec<Logged>>) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut out = stream;
    // One request per connection: every answer says `Connection: close`.
    let Some(req) = read_request(&mut reader)? else {
        return Ok(());
    };
    let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
    let path = req.target.split('?').next().unwrap_or("");
    let (answer, bytes) = match (req.method.as_str(), path) {
        ("POST", "/v1/messages") => messages(&body, command),
        ("POST", "/v1/responses") => responses(&body, command),
        ("POST", p) if p.starts_with("/v1beta/models/") && p.contains("enerateContent") => {
            gemini(&body, command, p.contains(":streamGenerateContent"))
        }
        ("POST", "/v1/messages/count_tokens") => (
            "token count".to_string(),
            json_response(200, &json!({"input_tokens": 42})),
        ),
        ("HEAD", _) | ("GET", "/") => ("200 empty".to_string(), json_response(200, &json!({}))),
        _ => (
            "404".to_string(),
            json_response(
                404,
                &json!({"type": "error", "error": {"type": "not_found_error",
                        "message": format!("the scripted model server has no {path}")}}),
            ),
        ),
    };
    if let Ok(mut l) = log.lock() {
        l.push(Logged {
            method: req.method,
            target: req.target,
            body,
            answer,
        });
    }
    out.write_all(&bytes)?;
    out.flush()
}

fn read_request(reader: &mut impl BufRead) -> std::io::Result<Option<Request>> {
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let target = parts.next().unwrap_or("").to_string();
    let mut length = 0usize;
    let mut chunked = false;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 {
            break;
        }
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            let value = value.trim();
            if name.eq_ignore_ascii_case("content-length") {
                length = value.parse().unwrap_or(0);
            } else if name.eq_ignore_ascii_case("transfer-encoding")
                && value.to_ascii_lowercase().contains("chunked")
            {
                chunked = true;
            }
        }
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size)?;
            let size =
                usize::from_str_radix(size.trim().split(';').next().unwrap_or(""), 16).unwrap_or(0);
            if size == 0 {
                // Trailers, up to the empty line.
                loop {
                    let mut t = String::new();
                    if reader.read_line(&mut t)? == 0 || t.trim().is_empty() {
                        break;
                    }
                }
                break;
            }
            let mut chunk = vec![0; size];
            reader.read_exact(&mut chunk)?;
            body.extend_from_slice(&chunk);
            let mut crlf = String::new();
            reader.read_line(&mut crlf)?;
        }
    } else {
        body.resize(length, 0);
        reader.read_exact(&mut body)?;
    }
    Ok(Some(Request {
        method,
        target,
        body,
    }))
}

/// One content block of a scripted answer.
enum Block {
    Text(String),
    /// A call of the shell tool (`Bash` in Claude Code, `bash` in pi) with a command.
    Shell {
        id: String,
        tool: String,
        command: String,
    },
}

/// The id of the scripted retry the last user message asks for
/// ([`RETRY_PROMPT`]), when its answer has not come back yet: the first
/// retry is [`RETRY_TOOL_USE_ID`], later ones (a session resumed again)
/// `…_2`, `…_3`.
fn retry_id(body: &Value) -> Option<String> {
    let asks_in = |content: &Value| match content {
        Value::String(t) => t.contains(RETRY_PROMPT),
        Value::Array(blocks) => blocks.iter().any(|b| {
            b["type"] == "text" && b["text"].as_str().is_some_and(|t| t.contains(RETRY_PROMPT))
        }),
        _ => false,
    };
    if !asks_in(last_user_content(body)) {
        return None;
    }
    // Every ask counts, wherever it stands (a resumed session may merge
    // user messages into one).
    let asks_count = |content: &Value| match content {
        Value::String(t) => t.matches(RETRY_PROMPT).count(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b["type"] == "text")
            .filter_map(|b| b["text"].as_str())
            .map(|t| t.matches(RETRY_PROMPT).count())
            .sum(),
        _ => 0,
    };
    let asked: usize = body["messages"]
        .as_array()
        .map(|m| {
            m.iter()
                .filter(|m| m["role"] == "user")
                .map(|m| asks_count(&m["content"]))
                .sum()
        })
        .unwrap_or(1);
    let id = if asked <= 1 {
        RETRY_TOOL_USE_ID.to_string()
    } else {
        format!("{RETRY_TOOL_USE_ID}_{asked}")
    };
    let answered = tool_results(body)
        .iter()
        .any(|r| r["tool_use_id"] == id.as_str());
    (!answered).then_some(id)
}

/// The scripted answer to a `/v1/messages` request.
fn messages(body: &Value, command: &str) -> (String, Vec<u8>) {
    let model = body["model"]
        .as_str()
        .unwrap_or("claude-scripted")
        .to_string();
    // A scripted tool call names its tool; else the shell tool offered.
    // (Only in the agent's own turns, which offer tools: not side queries.)
    let shell_tool = match scripted_tool(command) {
        Some((name, _)) => Some(name).filter(|_| !tool_names(body).is_empty()),
        None => tool_names(body)
            .into_iter()
            .find(|t| t == "Bash" || t == "bash"),
    };
    let retry = retry_id(body);
    let (blocks, stop, answer) = if let (Some(tool), Some(id)) = (shell_tool.clone(), retry) {
        (
            vec![Block::Shell {
                id,
                tool,
                command: command.to_string(),
            }],
            "tool_use",
            "Bash tool_use again",
        )
    } else if !tool_results(body).is_empty() {
        (
            vec![Block::Text("The scripted command has finished.".into())],
            "end_turn",
            "text after the tool result",
        )
    } else if let Some(tool) = shell_tool {
        (
            vec![Block::Shell {
                id: TOOL_USE_ID.to_string(),
                tool,
                command: command.to_string(),
            }],
            "tool_use",
            "Bash tool_use",
        )
    } else {
        (
            vec![Block::Text("portcullis e2e".into())],
            "end_turn",
            "text (side query)",
        )
    };
    let bytes = if body["stream"] == true {
        sse(&model, &blocks, stop)
    } else {
        json_response(200, &whole_message(&model, &blocks, stop))
    };
    (answer.to_string(), bytes)
}

/// The scripted answer to a Gemini `generateContent` request: a call of the
/// scripted tool ([`tool_call`]; else `run_shell_command`) when the tool is
/// offered and no `functionResponse` came back in this turn yet, else a
/// short text. (A resumed session asks again: its new prompt is the last turn.)
fn gemini(body: &Value, command: &str, stream: bool) -> (String, Vec<u8>) {
    let tool = scripted_tool(command).map_or_else(|| "run_shell_command".to_string(), |(n, _)| n);
    let offered = body["tools"].as_array().is_some_and(|tools| {
        tools.iter().any(|t| {
            t["functionDeclarations"]
                .as_array()
                .is_some_and(|f| f.iter().any(|f| f["name"] == tool.as_str()))
        })
    });
    let (parts, answer) = if gemini_function_responses(body).is_empty() && offered {
        (
            json!([{"functionCall": {"name": tool, "args": tool_input(command)}}]),
            "functionCall",
        )
    } else {
        (
            json!([{"text": "The scripted command has finished."}]),
            "text",
        )
    };
    let chunk = json!({
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 42, "candidatesTokenCount": 7, "totalTokenCount": 49},
        "modelVersion": "gemini-scripted",
    });
    let bytes = if stream {
        let body = format!("data: {chunk}\r\n\r\n");
        let mut out = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\
             connection: close\r\n\r\n",
            body.len()
        )
        .into_bytes();
        out.extend_from_slice(body.as_bytes());
        out
    } else {
        json_response(200, &chunk)
    };
    (answer.to_string(), bytes)
}

/// The `functionResponse` parts of a Gemini request's last turn.
pub fn gemini_function_responses(body: &Value) -> Vec<Value> {
    body["contents"]
        .as_array()
        .and_then(|c| c.last())
        .and_then(|turn| turn["parts"].as_array())
        .map(|parts| {
            parts
                .iter()
                .filter_map(|p| p.get("functionResponse").cloned())
                .collect()
        })
        .unwrap_or_default()
}

/// The scripted answer to a Responses API request (Codex CLI): a call of
/// Codex's shell tool `exec_command` while no `function_call_output` came
/// back, else a short text. Codex always asks for a stream.
///
/// A scripted MCP tool ([`tool_call`] with `mcp__SERVER__TOOL`) is called as
/// Codex's models call MCP tools — `namespace: "mcp__SERVER"`, `name: TOOL`
/// (Codex 0.171.0 keeps them behind `tool_search`, not in `tools`) — whenever
/// the last input item is a prompt (a resumed thread asks again), with call
/// id [`CALL_ID`], then `…_1`, `…_2` after as many earlier outputs.
///
/// Codex starts its MCP servers beside the first request and does not wait
/// for them: a call made before the server has listed its tools comes back
/// as [`UNSUPPORTED_CALL`] without reaching any hook or server. The script
/// then calls again a moment later, as a model told of the new namespace
/// would, up to [`UNSUPPORTED_RETRIES`] times.
fn responses(body: &Value, command: &str) -> (String, Vec<u8>) {
    let outputs = function_call_outputs(body);
    let mcp = scripted_tool(command).and_then(|(name, input)| {
        let (server, tool) = name.strip_prefix("mcp__")?.split_once("__")?;
        Some((format!("mcp__{server}"), tool.to_string(), input))
    });
    let call = match mcp {
        Some((namespace, tool, input)) => {
            let last = last_input_item(body);
            let unsupported = |o: &Value| output_text(o).starts_with(UNSUPPORTED_CALL);
            let retry = unsupported(last)
                && outputs.iter().filter(|o| unsupported(o)).count() <= UNSUPPORTED_RETRIES;
            if retry {
                std::thread::sleep(std::time::Duration::from_millis(500));
            }
            let prompted = last["type"] != "function_call_output" || retry;
            prompted.then(|| {
                let id = match outputs.len() {
                    0 => CALL_ID.to_string(),
                    n => format!("{CALL_ID}_{n}"),
                };
                json!({"type": "function_call", "id": "fc_portcullis_e2e", "call_id": id,
                       "namespace": namespace, "name": tool,
                       "arguments": input.to_string(), "status": "completed"})
            })
        }
        None => {
            let offered = tool_names(body).iter().any(|t| t == "exec_command");
            (offered && outputs.is_empty()).then(|| {
                json!({"type": "function_call", "id": "fc_portcullis_e2e", "call_id": CALL_ID,
                       "name": "exec_command", "arguments": json!({"cmd": command}).to_string(),
                       "status": "completed"})
            })
        }
    };
    let (item, answer) = match call {
        Some(item) => (item, "function_call"),
        None => (
            json!({"type": "message", "id": "msg_portcullis_e2e", "role": "assistant",
                   "status": "completed", "content": [{"type": "output_text",
                   "text": "The scripted command has finished.", "annotations": []}]}),
            "text",
        ),
    };
    let response =
        json!({"id": "resp_portcullis_e2e", "object": "response", "status": "completed"});
    let mut completed = response.clone();
    completed["usage"] = json!({"input_tokens": 42, "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 7, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 49});
    let events = vec![
        (
            "response.created",
            json!({"type": "response.created", "response": response}),
        ),
        (
            "response.output_item.done",
            json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        ),
        (
            "response.completed",
            json!({"type": "response.completed", "response": completed}),
        ),
    ];
    (answer.to_string(), event_stream(events))
}

/// How Codex answers a call of a tool it does not (yet) have.
pub const UNSUPPORTED_CALL: &str = "unsupported call";

/// How often the script calls an MCP tool again that Codex did not have yet.
const UNSUPPORTED_RETRIES: usize = 40;

/// The text of a `function_call_output` item: its `output` string, or the
/// JSON of its content items.
pub fn output_text(item: &Value) -> String {
    match &item["output"] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The `function_call_output` items of a Responses API request's input.
pub fn function_call_outputs(body: &Value) -> Vec<Value> {
    body["input"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter(|i| i["type"] == "function_call_output")
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

/// The last item of a Responses API request's input (`Null` when there is none).
pub fn last_input_item(body: &Value) -> &Value {
    body["input"]
        .as_array()
        .and_then(|items| items.last())
        .unwrap_or(&Value::Null)
}

fn tool_input(command: &str) -> Value {
    match scripted_tool(command) {
        Some((_, input)) => input,
        None => json!({"command": command, "description": "Run the scripted command"}),
    }
}

/// A scripted call of a tool other than the shell: [`ModelServer::start`]
/// with this text calls tool `name` (an MCP tool, say) with `input`.
#[allow(dead_code)] // the suites that script shell commands only
pub fn tool_call(name: &str, input: &Value) -> String {
    format!("@tool {name} {input}")
}

/// The tool and input of a [`tool_call`] text.
fn scripted_tool(command: &str) -> Option<(String, Value)> {
    let rest = command.strip_prefix("@tool ")?;
    let (name, input) = rest.split_once(' ')?;
    Some((name.to_string(), serde_json::from_str(input).ok()?))
}

fn whole_message(model: &str, blocks: &[Block], stop: &str) -> Value {
    let content: Vec<Value> = blocks
        .iter()
        .map(|b| match b {
            Block::Text(t) => json!({"type": "text", "text": t}),
            Block::Shell { id, tool, command } => {
                json!({"type": "tool_use", "id": id, "name": tool, "input": tool_input(command)})
            }
        })
        .collect();
    json!({
        "id": "msg_portcullis_e2e",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": null,
        "usage": {"input_tokens": 42, "output_tokens": 7},
    })
}

/// The answer as Server-Sent Events, in the order the Messages API sends them.
fn sse(model: &str, blocks: &[Block], stop: &str) -> Vec<u8> {
    let mut events: Vec<(&str, Value)> = vec![(
        "message_start",
        json!({"type": "message_start", "message": {
            "id": "msg_portcullis_e2e", "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 42, "output_tokens": 1}}}),
    )];
    for (index, block) in blocks.iter().enumerate() {
        let (start, delta) = match block {
            Block::Text(t) => (
                json!({"type": "text", "text": ""}),
                json!({"type": "text_delta", "text": t}),
            ),
            Block::Shell { id, tool, command } => (
                json!({"type": "tool_use", "id": id, "name": tool, "input": {}}),
                json!({"type": "input_json_delta", "partial_json": tool_input(command).to_string()}),
            ),
        };
        events.push((
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        events.push((
            "content_block_delta",
            json!({"type": "content_block_delta", "index": index, "delta": delta}),
        ));
        events.push((
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
    }
    events.push((
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
               "usage": {"output_tokens": 7}}),
    ));
    events.push(("message_stop", json!({"type": "message_stop"})));
    event_stream(events)
}

/// A whole Server-Sent Events response: `event: <name>` and `data: <json>` per event.
fn event_stream(events: Vec<(&str, Value)>) -> Vec<u8> {
    let mut body = String::new();
    for (name, data) in events {
        body.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    }
    let mut out = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\
         request-id: req_portcullis_e2e\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

fn json_response(status: u16, value: &Value) -> Vec<u8> {
    let reason = match status {
        200 => "OK",
        404 => "Not Found",
        _ => "Status",
    };
    let body = value.to_string();
    let mut out = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n\
         request-id: req_portcullis_e2e\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}
