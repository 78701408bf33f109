//! Anthropic's server tools in a Claude Code log: tools the API runs
//! itself within a response (web search, web fetch, code execution, the
//! MCP connector), whose calls and results the response carries as blocks
//! of their own beside the model's text and its client tool calls.

use serde_json::Value;

use crate::transcript::json::value_to_string;
use crate::transcript::Block;

/// The blocks of Anthropic's server tools in the Messages API's reference:
/// the calls (`server_tool_use`, `mcp_tool_use`), their results, and a file
/// the code-execution container was given. The server runs the tool within
/// the response, so the call and its result are both in the assistant's
/// content, and the next request sends them back as context.
const SERVER_TOOL_BLOCKS: [&str; 10] = [
    "server_tool_use",
    "web_search_tool_result",
    "web_fetch_tool_result",
    "code_execution_tool_result",
    "bash_code_execution_tool_result",
    "text_editor_code_execution_tool_result",
    "tool_search_tool_result",
    "mcp_tool_use",
    "mcp_tool_result",
    "container_upload",
];

/// Whether a block is a server tool's call or result: one of
/// [`SERVER_TOOL_BLOCKS`], or the `*_tool_result` of a server tool added
/// since (a client tool's result is a plain `tool_result`).
pub(crate) fn is_server_tool_block(kind: &str) -> bool {
    SERVER_TOOL_BLOCKS.contains(&kind) || kind.ends_with("_tool_result")
}

/// A server tool's call or result as smith's history holds it: a text
/// block whose bytes are the block's JSON (the call's input, the result's
/// content, with their ids), in the message that holds it. Not a smith
/// `tool_use` and `tool` pair: smith pairs every call with a result message
/// the client sends, and its stages (supersede, trim, clear) rewrite those
/// results; a server tool's result came back inside the same response,
/// Claude Code never sent or rewrote it. As text of the assistant message it
/// is sent again with every later request, counted and priced as the
/// context it is, and a compaction keeps or summarises it with the rest of
/// the turn.
pub(crate) fn server_tool_block(b: &Value) -> Block {
    Block::text(value_to_string(b).into_bytes())
}
