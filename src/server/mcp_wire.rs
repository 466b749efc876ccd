//! The MCP server's stdio framing: every line a client sends is checked before `rmcp`
//! reads it, so that input the SDK drops without a word is answered as JSON-RPC 2.0
//! (§5.1, <https://www.jsonrpc.org/specification#error_object>) says, and logged on
//! stderr:
//!
//! | a line that is | answer |
//! | --- | --- |
//! | not JSON (a syntax error, a lone surrogate `\ud800`, invalid UTF-8) | `-32700` Parse error, `id` null |
//! | JSON but no MCP message (not an object, no `jsonrpc: "2.0"`, a bad `params` shape), with an `id` or none | `-32600` Invalid Request, with its `id` when it is a string or number |
//! | longer than [`MAX_LINE_BYTES`] | `-32600`, `id` null (the line is skipped) |
//! | a notification the SDK does not know | none (JSON-RPC never answers a notification) |
//!
//! Everything else goes to `rmcp` unchanged, and whatever `rmcp` writes goes to stdout
//! line by line, never interleaved with these answers.

use rmcp::model::ClientJsonRpcMessage;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// Longest line read (bytes, 16 MiB, as `rmcp`'s own limit); a longer one is skipped
/// and answered `-32600`.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// JSON-RPC 2.0: the message is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC 2.0: the JSON is not a valid request.
pub const INVALID_REQUEST: i64 = -32600;

/// What to do with one line from the client.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Hand it to `rmcp`.
    Forward,
    /// Answer with this JSON-RPC error response (one line, no newline) and drop it.
    Answer(String),
    /// Drop it (blank lines).
    Skip,
}

/// Checks one line (without its newline).
pub fn classify(line: &[u8]) -> Verdict {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Skip;
    }
    let value: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) => {
            tracing::warn!("MCP: a message that is not JSON was answered {PARSE_ERROR}: {e}");
            return Verdict::Answer(error_line(&Value::Null, PARSE_ERROR, "Parse error", &e));
        }
    };
    if let Err(e) = serde_json::from_value::<ClientJsonRpcMessage>(value.clone()) {
        let id = value.get("id");
        let method = value.get("method");
        if id.is_none() && method.is_some_and(Value::is_string) {
            // a notification: never answered; rmcp ignores the ones it does not know
            tracing::debug!("MCP: a notification the SDK does not read: {e}");
            return Verdict::Forward;
        }
        let id = match id {
            Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
            _ => Value::Null,
        };
        tracing::warn!(
            "MCP: a message that is not a valid JSON-RPC request was answered {INVALID_REQUEST} (id {id}): {e}"
        );
        return Verdict::Answer(error_line(&id, INVALID_REQUEST, "Invalid Request", &e));
    }
    Verdict::Forward
}

/// A JSON-RPC 2.0 error response as one line.
fn error_line(id: &Value, code: i64, message: &str, why: &dyn std::fmt::Display) -> String {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message, "data": why.to_string()},
    })
    .to_string()
}

/// The streams `rmcp` is served on, between the client's `input`/`output` and the SDK:
/// returns the reader and writer to hand to `rmcp` and the task that copies both ways
/// (it ends when `input` ends and `rmcp` has closed its writer; await it so every answer
/// is flushed).
pub fn wire<R, W>(
    input: R,
    output: W,
) -> (
    tokio::io::DuplexStream,
    tokio::io::DuplexStream,
    tokio::task::JoinHandle<()>,
)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (sdk_in, feed) = tokio::io::duplex(64 * 1024);
    let (sdk_out, drain) = tokio::io::duplex(64 * 1024);
    let (answers, answered) = mpsc::channel::<String>(64);
    let reader = tokio::spawn(read_client(input, feed, answers));
    let writer = tokio::spawn(write_client(drain, answered, output));
    let task = tokio::spawn(async move {
        let _ = reader.await;
        let _ = writer.await;
    });
    (sdk_in, sdk_out, task)
}

/// Reads lines from the client: forwards MCP messages to `feed`, sends answers to
/// `answers`; closes `feed` at the end of `input`.
async fn read_client<R: AsyncRead + Unpin>(
    input: R,
    mut feed: tokio::io::DuplexStream,
    answers: mpsc::Sender<String>,
) {
    let mut input = BufReader::new(input);
    let mut line = Vec::new();
    loop {
        line.clear();
        let limit = MAX_LINE_BYTES as u64;
        match (&mut input).take(limit).read_until(b'\n', &mut line).await {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => {
                tracing::error!("MCP: cannot read stdin: {e}");
                break;
            }
        }
        // rmcp counts the newline against its limit: a longer line would be dropped
        // there without an answer
        let verdict = if line.len() >= MAX_LINE_BYTES {
            if line.last() != Some(&b'\n') && skip_rest_of_line(&mut input).await.is_err() {
                break;
            }
            tracing::warn!("MCP: a message longer than {MAX_LINE_BYTES} bytes was skipped");
            let why = format!("longer than {MAX_LINE_BYTES} bytes");
            Verdict::Answer(error_line(
                &Value::Null,
                INVALID_REQUEST,
                "Invalid Request",
                &why,
            ))
        } else {
            classify(line.strip_suffix(b"\n").unwrap_or(&line))
        };
        match verdict {
            Verdict::Forward => {
                if !line.ends_with(b"\n") {
                    line.push(b'\n');
                }
                if feed.write_all(&line).await.is_err() {
                    break;
                }
            }
            Verdict::Answer(a) => {
                if answers.send(a).await.is_err() {
                    break;
                }
            }
            Verdict::Skip => {}
        }
    }
    let _ = feed.shutdown().await;
}

/// Reads and drops the rest of an over-long line.
async fn skip_rest_of_line<R: AsyncRead + Unpin>(input: &mut BufReader<R>) -> std::io::Result<()> {
    loop {
        let buf = input.fill_buf().await?;
        if buf.is_empty() {
            return Ok(());
        }
        match buf.iter().position(|&b| b == b'\n') {
            Some(i) => {
                input.consume(i + 1);
                return Ok(());
            }
            None => {
                let n = buf.len();
                input.consume(n);
            }
        }
    }
}

/// Writes `rmcp`'s lines and the answers to the client, whole lines at a time: a line of
/// `rmcp` read in part is kept in its own buffer until its newline, so an answer never
/// lands inside it.
async fn write_client<W: AsyncWrite + Unpin>(
    drain: tokio::io::DuplexStream,
    mut answered: mpsc::Receiver<String>,
    mut output: W,
) {
    let mut sdk = BufReader::new(drain);
    let mut pending = Vec::new();
    let (mut sdk_open, mut answers_open) = (true, true);
    while sdk_open || answers_open {
        let out: Vec<u8> = tokio::select! {
            read = sdk.read_until(b'\n', &mut pending), if sdk_open => match read {
                Ok(0) | Err(_) => {
                    sdk_open = false;
                    std::mem::take(&mut pending)
                }
                Ok(_) if pending.ends_with(b"\n") => std::mem::take(&mut pending),
                Ok(_) => continue,
            },
            answer = answered.recv(), if answers_open => match answer {
                Some(a) => {
                    let mut line = a.into_bytes();
                    line.push(b'\n');
                    line
                }
                None => {
                    answers_open = false;
                    continue;
                }
            },
        };
        if !out.is_empty()
            && (output.write_all(&out).await.is_err() || output.flush().await.is_err())
        {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(line: &str) -> Value {
        match classify(line.as_bytes()) {
            Verdict::Answer(a) => serde_json::from_str(&a).expect("an answer is JSON"),
            other => panic!("{line}: expected an answer, got {other:?}"),
        }
    }

    #[test]
    fn not_json_is_a_parse_error_with_a_null_id() {
        for line in [
            "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": ",
            "not json at all",
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"search_docs\",\"arguments\":{\"query\":\"\\ud800\"}}}",
        ] {
            let a = answer(line);
            assert_eq!(a["error"]["code"], PARSE_ERROR, "{line}");
            assert_eq!(a["id"], Value::Null);
            assert_eq!(a["jsonrpc"], "2.0");
        }
        let invalid_utf8 = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":\"\xff\"}";
        assert!(matches!(classify(invalid_utf8), Verdict::Answer(a) if a.contains("-32700")));
    }

    #[test]
    fn json_that_is_no_request_is_invalid_with_its_id() {
        let a = answer("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":42}");
        assert_eq!(a["error"]["code"], INVALID_REQUEST);
        assert_eq!(a["id"], 7);
        let a = answer("[1, 2]");
        assert_eq!(a["error"]["code"], INVALID_REQUEST);
        assert_eq!(a["id"], Value::Null);
        let a = answer("{\"foo\": \"bar\"}");
        assert_eq!(a["error"]["code"], INVALID_REQUEST);
    }

    #[test]
    fn messages_and_notifications_go_to_the_sdk() {
        for line in [
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
            "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"no/such/method\"}",
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
            "{\"jsonrpc\":\"2.0\",\"method\":\"$/lsp-ish\",\"params\":[1]}",
            "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r",
        ] {
            assert_eq!(classify(line.as_bytes()), Verdict::Forward, "{line}");
        }
        assert_eq!(classify(b"   "), Verdict::Skip);
    }

    #[tokio::test]
    async fn answers_and_sdk_lines_reach_the_client_whole() {
        let input: &[u8] = b"oops\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n";
        let (client_side, server_side) = tokio::io::duplex(4096);
        let (mut sdk_in, mut sdk_out, task) = wire(input, server_side);
        let mut got = String::new();
        sdk_in.read_to_string(&mut got).await.expect("read");
        assert_eq!(got, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n");
        sdk_out.write_all(b"{\"sdk\":1}\n").await.expect("write");
        drop(sdk_out);
        task.await.expect("task");
        let mut out = String::new();
        let mut client_side = client_side;
        client_side.read_to_string(&mut out).await.expect("read");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 2, "{out}");
        assert!(lines.contains(&"{\"sdk\":1}"));
        assert!(lines.iter().any(|l| l.contains("-32700")));
    }

    #[tokio::test]
    async fn an_answer_never_lands_inside_a_line_the_sdk_is_writing() {
        let (mut client_in, input) = tokio::io::duplex(4096);
        let (client_out, output) = tokio::io::duplex(4096);
        let (_sdk_in, mut sdk_out, task) = wire(input, output);
        sdk_out.write_all(b"{\"sdk\":").await.expect("write");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        client_in.write_all(b"oops\n").await.expect("write");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        sdk_out.write_all(b"1}\n").await.expect("write");
        drop(sdk_out);
        drop(client_in);
        task.await.expect("task");
        let mut out = String::new();
        let mut client_out = client_out;
        client_out.read_to_string(&mut out).await.expect("read");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 2, "{out}");
        assert!(lines.contains(&"{\"sdk\":1}"), "{out}");
        for l in lines {
            serde_json::from_str::<Value>(l).expect("every line is whole JSON");
        }
    }
}
