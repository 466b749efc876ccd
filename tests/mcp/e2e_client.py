"""End-to-end check of `docfuse mcp` with the official MCP Python SDK (`mcp` on PyPI).

Run by tests/mcp_e2e.rs, which builds the index and plants the files this script expects:

    python3 e2e_client.py DOCFUSE_BIN INDEX_DIR ROOT SECRET_FILE LINKED_REL TRANSCRIPT STDERR_LOG CHANGED_REL ORIGINAL

- ROOT: the indexed root (a copy of the cargo book);
- SECRET_FILE: a file outside ROOT whose content must never appear in any response;
- LINKED_REL: an indexed file of ROOT replaced, after indexing, by a symlink to SECRET_FILE;
- TRANSCRIPT: every response is appended there as JSON, for the caller to grep;
- CHANGED_REL: an indexed file of ROOT given four new lines at its top after indexing;
  ORIGINAL: its text as indexed.

Drives initialize, tools/list and tools/call of every tool; exits non-zero with a message
on the first failed check.
"""

import asyncio
import json
import os
import sys

from jsonschema import Draft202012Validator
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

DOCFUSE, INDEX, ROOT, SECRET, LINKED_REL, TRANSCRIPT, STDERR_LOG, CHANGED_REL, ORIGINAL = sys.argv[1:10]
transcript = []


def field(obj, snake, camel):
    """An attribute under its v2 (snake_case) or v1 (camelCase) name."""
    return getattr(obj, snake, None) if hasattr(obj, snake) else getattr(obj, camel, None)


def dump(obj):
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json", by_alias=True, exclude_none=True)
    return obj


def check(cond, what, detail=None):
    if not cond:
        extra = "" if detail is None else "\n" + json.dumps(dump(detail), indent=2)[:4000]
        raise AssertionError(f"check failed: {what}{extra}")


def text_of(result):
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


# What strict validators (Ajv strict mode, typed clients) refuse or cannot follow.
FORBIDDEN_KEYWORDS = {"$ref", "$schema", "$defs", "definitions", "format", "oneOf", "anyOf", "allOf", "nullable"}

# Every tool result must stay under the default response budget (10,000 tokens ≈ 4 bytes each).
BUDGET_BYTES = 10_000 * 4


def lint_schema(schema, where):
    """Plain JSON Schema: no references or custom formats, one type per property, a
    description on every property, integers with a minimum, no extra properties."""
    check(not (FORBIDDEN_KEYWORDS & set(schema)), f"{where}: no {sorted(FORBIDDEN_KEYWORDS & set(schema))}", schema)
    if "type" in schema:
        check(isinstance(schema["type"], str), f"{where}: one type, not a list", schema)
    if schema.get("type") == "integer":
        check("minimum" in schema, f"{where}: an integer has a minimum", schema)
    if schema.get("type") == "object":
        check(schema.get("additionalProperties") is False, f"{where}: no extra properties", schema)
    for name, prop in schema.get("properties", {}).items():
        check(isinstance(prop.get("description"), str) and len(prop["description"]) > 10, f"{where}.{name}: a description", prop)
        lint_schema(prop, f"{where}.{name}")
    if "items" in schema:
        lint_schema(schema["items"], f"{where}[]")


def file_lines(rel, start, end):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        lines = f.read().splitlines()
    return "\n".join(lines[start - 1 : end])


async def call(session, name, args):
    result = await session.call_tool(name, args)
    transcript.append({"tool": name, "arguments": args, "result": dump(result)})
    return result, field(result, "structured_content", "structuredContent"), field(result, "is_error", "isError")


async def run():
    params = StdioServerParameters(command=DOCFUSE, args=["mcp", "--index", INDEX], cwd=os.path.dirname(INDEX))
    with open(STDERR_LOG, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await exercise(session)


async def exercise(session):
    init = await session.initialize()
    transcript.append({"initialize": dump(init)})
    info = field(init, "server_info", "serverInfo")
    check(info.name == "docfuse", "server name is docfuse", init)
    check(field(init, "capabilities", "capabilities").tools is not None, "tools capability", init)

    # tools/list: three tools with schemas and descriptions
    listed = await session.list_tools()
    transcript.append({"tools/list": dump(listed)})
    tools = {t.name: t for t in listed.tools}
    check(set(tools) == {"search_docs", "read_passage", "read_document", "index_status", "handoff"}, "the five tools", listed)
    for t in tools.values():
        check(t.description and len(t.description) > 40, f"{t.name} has a description", t)
    search_schema = field(tools["search_docs"], "input_schema", "inputSchema")
    check(search_schema.get("required") == ["query"], "search_docs requires only query", search_schema)
    props = search_schema["properties"]
    for p in ["query", "limit", "mode", "path_prefix", "globs"]:
        check(p in props, f"search_docs has `{p}`", search_schema)
    check("lexical" in json.dumps(search_schema), "search_docs schema names the modes", search_schema)
    read_props = field(tools["read_passage"], "input_schema", "inputSchema")["properties"]
    for p in ["id", "path", "start_line", "end_line"]:
        check(p in read_props, f"read_passage has `{p}`", read_props)
    # strict JSON Schema 2020-12: the meta-schema accepts each one, and nothing a strict
    # validator refuses is in them
    schemas = {name: field(t, "input_schema", "inputSchema") for name, t in tools.items()}
    for name, schema in schemas.items():
        Draft202012Validator.check_schema(schema)
        lint_schema(schema, name)
    with open(os.path.join(os.path.dirname(TRANSCRIPT), "tools.json"), "w", encoding="utf-8") as f:
        json.dump(schemas, f, indent=1)
    check(props["limit"]["minimum"] == 1 and props["limit"]["maximum"] == 100, "limit's range", props["limit"])
    check(props["mode"]["enum"] == ["auto", "lexical", "vector", "hybrid"], "modes inlined", props["mode"])
    v = Draft202012Validator(search_schema)
    check(v.is_valid({"query": "x", "limit": 3}) and v.is_valid({"query": "x", "limit": 3.0}), "valid arguments pass", search_schema)
    for bad in [{"query": "x", "limit": 0}, {"limit": 3}, {"query": "x", "extra": 1}, {"query": "x", "mode": "fast"}, {"query": 3}]:
        check(not v.is_valid(bad), f"{bad} is refused by the schema", search_schema)

    # search_docs: real passages with heading path, path:line, score, lexical match
    result, data, is_error = await call(
        session, "search_docs", {"query": "publish a crate to crates.io", "limit": 3, "mode": "lexical"}
    )
    check(not is_error, "search_docs succeeds", result)
    check(data["mode"] == "lexical" and data["query"] == "publish a crate to crates.io", "envelope", data)
    hits = data["results"]
    check(len(hits) == 3, "three results", data)
    check(hits[0]["path"] == "reference/publishing.md", "best passage is from publishing.md", data)
    check(hits[0]["heading_path"][0] == "Publishing on crates.io", "heading path", data)
    check(all(h["lexical_match"] for h in hits), "every result matched lexically", data)
    check([h["rank"] for h in hits] == [1, 2, 3], "ranks", data)
    check(hits[0]["score"] >= hits[1]["score"] >= hits[2]["score"] > 0, "scores descend", data)
    ev = hits[0]["evidence"]
    check(ev["path"] == hits[0]["path"] and (ev["start_line"], ev["end_line"]) == (hits[0]["start_line"], hits[0]["end_line"]), "evidence names the passage", hits[0])
    check(len(ev["chunk_sha256"]) == 64 and len(ev["file_sha256"]) == 64, "evidence carries both sha256", ev)
    check(hits[0]["provenance"] == "observed" and hits[0]["confidence"] == "observed", "provenance and confidence", hits[0])
    text = text_of(result)
    cite = f'{hits[0]["path"]}:{hits[0]["match_line"]}'
    check(hits[0]["start_line"] <= hits[0]["match_line"] <= hits[0]["end_line"], "the match line lies in the passage", hits[0])
    check(f"1. {cite} " in text and f'[1] {cite} (lines {hits[0]["start_line"]}-{hits[0]["end_line"]})' in text, "text cites path:match_line and the line range", text)
    check("lexical match: yes" in text, "text says lexical match", text)
    check(file_lines(hits[0]["path"], hits[0]["start_line"], hits[0]["start_line"] + 1).split("\n")[0] in hits[0]["content"],
          "content holds the passage text", hits[0])

    # search_docs with a path filter: still `limit` results, all under the prefix
    result, data, is_error = await call(
        session, "search_docs", {"query": "build the package", "limit": 5, "path_prefix": "commands/", "mode": "lexical"}
    )
    check(not is_error, "filtered search succeeds", result)
    check(len(data["results"]) == 5, "five filtered results", data)
    check(all(h["path"].startswith("commands/") for h in data["results"]), "all under commands/", data)
    result, data, is_error = await call(
        session, "search_docs", {"query": "build", "limit": 4, "globs": ["reference/*.md"]}
    )
    check(not is_error and len(data["results"]) == 4, "glob-filtered search", result)
    check(all(h["path"].startswith("reference/") for h in data["results"]), "all match the glob", data)

    # search_docs: a bad limit is a tool error the assistant can read
    result, data, is_error = await call(session, "search_docs", {"query": "x", "limit": 0})
    check(is_error and data["error"]["code"] == "bad_request", "limit 0 is refused", result)

    # read_passage by id: the exact lines of the chunk, as on disk
    result, data, is_error = await call(session, "search_docs", {"query": "publish a crate to crates.io", "limit": 1, "mode": "lexical"})
    top = data["results"][0]
    result, data, is_error = await call(session, "read_passage", {"id": top["id"]})
    check(not is_error, "read_passage by id succeeds", result)
    check((data["path"], data["start_line"], data["end_line"]) == (top["path"], top["start_line"], top["end_line"]),
          "the chunk's lines", data)
    check(data["text"] == file_lines(top["path"], top["start_line"], top["end_line"]), "exact text by id", data)
    check(data["heading_path"] == top["heading_path"], "heading path of the chunk", data)
    check(text_of(result).startswith(f'{top["path"]}:{top["start_line"]}-{top["end_line"]}'), "text starts with the citation", result)

    # read_passage by path and lines
    result, data, is_error = await call(session, "read_passage", {"path": "faq.md", "start_line": 3, "end_line": 6})
    check(not is_error, "read_passage by path succeeds", result)
    check(data["text"] == file_lines("faq.md", 3, 6), "exact lines 3-6 of faq.md", data)
    check((data["start_line"], data["end_line"]) == (3, 6) and data["total_lines"] > 100, "line numbers", data)
    result, data, is_error = await call(session, "read_passage", {"path": "faq.md", "start_line": 100000})
    check(is_error and data["error"]["code"] == "bad_request", "a line past the end is refused", result)
    result, data, is_error = await call(session, "read_passage", {"path": "no/such/file.md"})
    check(is_error and data["error"]["code"] == "not_found", "an unknown file is not found", result)

    # read_passage: every traversal attempt is refused
    with open(SECRET, encoding="utf-8") as f:
        secret = f.read().strip()
    secret_rel = os.path.relpath(SECRET, ROOT)
    refused = [
        secret_rel,
        "../" + secret_rel,
        "guide/../../" + os.path.basename(SECRET),
        SECRET,
        "%2e%2e/" + os.path.basename(SECRET),
        "%2E%2E%2F" + os.path.basename(SECRET),
        "guide/%2e%2e/%2e%2e/" + os.path.basename(SECRET),
        "..\\" + os.path.basename(SECRET),
    ]
    for path in refused:
        for args in [{"path": path}, {"path": path, "start_line": 1, "end_line": 3}]:
            result, data, is_error = await call(session, "read_passage", args)
            check(is_error, f"`{path}` is refused", result)
            check(data["error"]["code"] == "forbidden_path", f"`{path}` is forbidden_path", result)
    # read_document: the sections of faq.md in file order, each its exact lines; the same
    # traversal refusals as read_passage
    start, last_end, pages = 0, 0, 0
    while True:
        result, data, is_error = await call(session, "read_document", {"path": "faq.md", "from": start})
        check(not is_error and data["from"] == start, "read_document succeeds", result)
        for c in data["chunks"]:
            check(c["start_line"] > last_end, "sections in file order", c)
            last_end = c["end_line"]
            if not c["truncated"]:
                check(c["text"] == file_lines("faq.md", c["start_line"], c["end_line"]), "a section's exact lines", c)
        pages += 1
        if data["next_from"] is None:
            break
        start = data["next_from"]
    check(last_end > 100, "the whole of faq.md", last_end)
    for path in refused:
        result, data, is_error = await call(session, "read_document", {"path": path})
        check(is_error and data["error"]["code"] == "forbidden_path", f"read_document `{path}` is forbidden_path", result)

    # an indexed file replaced by a symlink that leaves the root is never read: by path
    # or by id, the text served is the indexed one, marked stale with the reason
    stem = os.path.splitext(os.path.basename(LINKED_REL))[0]
    result, data, is_error = await call(session, "search_docs", {"query": stem, "limit": 50, "path_prefix": LINKED_REL, "mode": "lexical"})
    ids = [h["id"] for h in data["results"]]
    check(ids, f"chunks of {LINKED_REL} are indexed", data)
    check(all(h["stale_reason"] and "outside its root" in h["stale_reason"] for h in data["results"]), "results from the relinked file are marked", data)
    check("STALE" in text_of(result), "the text content marks them too", result)
    for args in [{"id": ids[0]}, {"path": LINKED_REL}, {"path": "./" + LINKED_REL, "start_line": 1, "end_line": 3}]:
        result, data, is_error = await call(session, "read_passage", args)
        check(not is_error and data["stale"] is True and "outside its root" in data["stale_reason"], f"{args} serves the indexed text, marked stale", result)
        check("STALE" in text_of(result), f"{args}: the text content says so", result)
    result, data, is_error = await call(session, "read_document", {"path": LINKED_REL})
    check(not is_error and data["stale"] is True and "outside its root" in data["stale_reason"], "read_document serves the indexed text, marked stale", result)
    check("STALE" in text_of(result), "read_document: the text content says so", result)
    # a file changed after indexing: results are marked, reads serve the indexed lines
    result, data, is_error = await call(session, "search_docs", {"query": "lock", "limit": 50, "path_prefix": CHANGED_REL, "mode": "lexical"})
    check(data["results"] and all(h["stale_reason"] == "file changed since indexing" for h in data["results"]), "results from the changed file are marked", data)
    first = data["results"][0]
    result, data, is_error = await call(session, "read_passage", {"id": first["id"]})
    with open(ORIGINAL, encoding="utf-8") as f:
        indexed = "\n".join(f.read().splitlines()[data["start_line"] - 1 : data["end_line"]])
    check(data["start_line"] == first["start_line"] and data["end_line"] >= first["end_line"], "an id reads its whole section", data)
    check(not is_error and data["stale"] is True and data["text"] == indexed, "the changed file's passage is the indexed text, marked stale", result)
    check("STALE" in text_of(result), "the text content says it is stale", result)

    # a symlink planted after indexing is not an indexed file
    result, data, is_error = await call(session, "read_passage", {"path": "planted-link.md"})
    check(is_error and data["error"]["code"] in ("not_found", "forbidden_path"), "planted symlink refused", result)

    # handoff: before editing reference/profiles.md, where to start, what to read, where to edit
    result, data, is_error = await call(session, "handoff", {"target": "reference/profiles.md"})
    check(not is_error, "handoff succeeds", result)
    check(data["target"]["kind"] == "document" and data["edit_roots"] == ["reference/profiles.md"], "target and edit roots", data)
    tiers = [e["tier"] for e in data["start_here"]]
    check("covers" in tiers and "mentions" in tiers, "covering and linking pages to start from", data)
    check(all(e["why"] and len(e["sha256"]) == 64 for e in data["start_here"]), "each entry says why, with its file's sha256", data)
    check(any(e["path"] == "reference/index.md" and e["tier"] == "covers" for e in data["start_here"]), "reference/index.md covers it", data)
    check(data["read_before_editing"] and data["explain"]["start_here"], "read-before list and explain", data)
    check("caveats" not in data, "no caveats unless asked", data)
    check("start here:" in text_of(result), "the text content lists where to start", result)
    result, data, is_error = await call(session, "handoff", {"target": "reference/", "caveats": True})
    check(not is_error and data["target"]["kind"] == "area" and data["edit_roots"] == ["reference/"], "a folder is an area", data)
    check("caveats" in data and data["caveats"]["no_agent_doc"] is True, "caveats when asked", data)
    result, data, is_error = await call(session, "handoff", {"target": "reference/profile.md"})
    check(is_error and data["error"]["code"] == "not_found" and "reference/profiles.md" in data["error"]["message"], "an unknown target names the closest", result)
    result, data, is_error = await call(session, "handoff", {"target": "x", "extra": 1})
    check(is_error and data["error"]["code"] == "bad_request", "an unknown field is refused", result)
    result, data, is_error = await call(session, "handoff", {"target": "\u200b\ufeff "})
    check(is_error and data["error"]["code"] == "bad_request", "an invisible target is empty", result)
    result, data, is_error = await call(session, "search_docs", {"query": "\u200b\u2060"})
    check(is_error and "is empty" in data["error"]["message"], "an invisible query is empty", result)

    # index_status: stale (the relinked file now leaves the root, so discovery skips it:
    # it counts as removed), counts, embedder
    result, data, is_error = await call(session, "index_status", {})
    check(not is_error, "index_status succeeds", result)
    check(data["documents"] == 100 and data["chunks"] > 1000, "counts", data)
    check(data["vectors"]["present"] is False and data["vectors"]["usable"] is False, "lexical-only index", data)
    check(data["roots"] == [os.path.realpath(ROOT)] or data["roots"] == [ROOT], "roots", data)
    check(text_of(result).split(":")[0] in ("fresh", "stale"), "text says fresh or stale", result)
    check(LINKED_REL in data["removed"] and data["fresh"] is False, "the relinked file makes the index stale", data)

    everything = json.dumps(transcript)
    check(secret not in everything, "the secret never appears in a response")
    # every tool result stays under the budget
    for entry in transcript:
        if "result" in entry:
            # compact, as the server sends it (json.dumps' default ", " and ": " add a byte
            # per field that never goes over the wire)
            size = len(json.dumps(entry["result"], ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
            check(size <= BUDGET_BYTES, f"{entry['tool']} {entry['arguments']}: {size} bytes <= {BUDGET_BYTES}", None)


try:
    asyncio.run(run())
    status = 0
except BaseException as e:  # noqa: BLE001 - report any failure, including ExceptionGroup
    print(f"FAILED: {e!r}", file=sys.stderr)
    status = 1
finally:
    with open(TRANSCRIPT, "w", encoding="utf-8") as f:
        json.dump(transcript, f, indent=1)
print(f"mcp e2e: {len(transcript)} responses checked", file=sys.stderr)
sys.exit(status)
