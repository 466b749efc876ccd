use super::sections::METHODS;
use super::*;
use crate::chunk::{chunk_document, ChunkerConfig, SourceKind};

const PETSTORE: &str = include_str!("../../../tests/fixtures/openapi/petstore.yaml");
const SWAGGER_PETSTORE: &str =
    include_str!("../../../tests/fixtures/openapi/swagger-petstore.yaml");
const PETSTORE_EXPANDED: &str =
    include_str!("../../../tests/fixtures/openapi/petstore-expanded.json");
const UBER: &str = include_str!("../../../tests/fixtures/openapi/uber.swagger.json");

fn doc(name: &str, text: &str) -> SourceDoc {
    SourceDoc {
        rel_path: name.to_string(),
        text: text.to_string(),
        kind: SourceKind::OpenApi,
        title_hint: None,
    }
}

fn chunks(name: &str, text: &str) -> Vec<Chunk> {
    chunk_document(&doc(name, text), &ChunkerConfig::default())
}

fn spec_error(text: &str) -> String {
    let d = doc("openapi.yaml", text);
    let prep = Prepared::new(&d);
    match spec_chunks(&d, &prep) {
        Ok(_) => panic!("read as a spec"),
        Err(e) => e,
    }
}

fn line(text: &str, n: u32) -> &str {
    text.lines().nth(n as usize - 1).unwrap_or("")
}

/// The 1-based line of the first line equal to `needle` after trimming, after line `from`.
fn find_line(text: &str, from: usize, needle: &str) -> u32 {
    let i = text
        .lines()
        .enumerate()
        .skip(from)
        .find(|(_, l)| l.trim() == needle)
        .map(|(i, _)| i)
        .expect("line present");
    i as u32 + 1
}

#[test]
fn spec_names_are_recognised_case_insensitively() {
    for name in [
        "openapi.json",
        "OpenAPI.yaml",
        "swagger.yml",
        "billing.openapi.yaml",
        "uber.swagger.json",
    ] {
        assert_eq!(
            SourceKind::of_file_name(name),
            Some(SourceKind::OpenApi),
            "{name}"
        );
    }
    for name in ["openapi.md", "api.json", "config.yaml", ".openapi.json"] {
        assert_ne!(
            SourceKind::of_file_name(name),
            Some(SourceKind::OpenApi),
            "{name}"
        );
    }
}

#[test]
fn each_operation_is_a_section_at_its_own_lines() {
    let c = chunks("openapi.yaml", PETSTORE);
    let ops: Vec<_> = c
        .iter()
        .filter(|c| c.heading_path.len() == 3 && c.heading_path[1] == "pets")
        .collect();
    let labels: Vec<&str> = ops.iter().map(|c| c.heading_path[2].as_str()).collect();
    assert_eq!(labels, ["GET /pets", "POST /pets", "GET /pets/{petId}"]);
    let list = ops[0];
    assert_eq!(list.heading_path[0], "Swagger Petstore");
    assert_eq!(list.title, "List all pets");
    // ids leave the API title out (a retitled API keeps its ids)
    assert_eq!(list.id, "openapi.yaml#pets/get-pets");
    assert_eq!(c[0].id, "openapi.yaml#_preamble");
    assert_eq!(list.start_line, find_line(PETSTORE, 0, "get:"));
    assert_eq!(line(PETSTORE, list.start_line).trim(), "get:");
    // ends on the line before `post:`, and its text is exactly those lines
    assert_eq!(list.end_line + 1, find_line(PETSTORE, 0, "post:"));
    let expected: Vec<&str> = PETSTORE
        .lines()
        .skip(list.start_line as usize - 1)
        .take((list.end_line - list.start_line + 1) as usize)
        .collect();
    assert_eq!(list.text, expected.join("\n"));
    assert!(
        list.symbols.iter().any(|s| s == "listPets"),
        "{:?}",
        list.symbols
    );
    assert!(list.symbols.iter().any(|s| s == "limit"));
    assert!(
        list.symbols.iter().any(|s| s == "Pets"),
        "response schema by $ref: {:?}",
        list.symbols
    );
    assert!(
        list.body
            .contains("limit (query) — integer (int32) — How many items to return at one time"),
        "{}",
        list.body
    );
    assert!(
        list.body
            .contains("200: A paged array of pets — application/json — Pets"),
        "{}",
        list.body
    );
    let schemas: Vec<&str> = c
        .iter()
        .filter(|c| c.heading_path.get(1).map(String::as_str) == Some("Schemas"))
        .map(|c| c.title.as_str())
        .collect();
    assert_eq!(schemas, ["Pet", "Pets", "Error"]);
    let pet = c.iter().find(|c| c.title == "Pet").expect("Pet schema");
    assert!(
        pet.body.contains("id (integer (int64), required)"),
        "{}",
        pet.body
    );
}

#[test]
fn every_fixture_gives_findable_operations_on_exact_disjoint_lines() {
    for (name, text, ops) in [
        ("petstore.yaml", PETSTORE, 3),
        ("openapi.yaml", SWAGGER_PETSTORE, 19),
        ("petstore-expanded.json", PETSTORE_EXPANDED, 4),
        ("swagger.json", UBER, 5),
    ] {
        let c = chunks(name, text);
        let operations: Vec<&Chunk> = c
            .iter()
            .filter(|c| {
                c.heading_path.last().is_some_and(|h| {
                    METHODS
                        .iter()
                        .any(|m| h.starts_with(&format!("{} /", m.to_ascii_uppercase())))
                })
            })
            .collect();
        assert_eq!(operations.len(), ops, "{name}");
        for op in &operations {
            let method = op
                .heading_path
                .last()
                .unwrap()
                .split(' ')
                .next()
                .unwrap()
                .to_ascii_lowercase();
            let key = line(text, op.start_line).trim().trim_matches('"');
            assert!(
                key.starts_with(&method),
                "{name}: {} starts at `{key}`",
                op.id
            );
        }
        // every operationId of the file is a symbol of exactly one operation chunk
        for id_line in text.lines().filter(|l| l.contains("operationId")) {
            let id = id_line
                .split(':')
                .nth(1)
                .unwrap()
                .trim()
                .trim_matches([',', '"', ' ']);
            let holders = operations
                .iter()
                .filter(|c| c.symbols.iter().any(|s| s == id))
                .count();
            assert_eq!(holders, 1, "{name}: {id}");
        }
        for w in c.windows(2) {
            assert!(
                w[0].end_line < w[1].start_line,
                "{name}: {} overlaps {}",
                w[0].id,
                w[1].id
            );
        }
        for ch in &c {
            let lines: Vec<&str> = text
                .lines()
                .skip(ch.start_line as usize - 1)
                .take((ch.end_line - ch.start_line + 1) as usize)
                .collect();
            assert_eq!(ch.text, lines.join("\n"), "{name}: {}", ch.id);
            assert!(!ch.body.trim().is_empty(), "{name}: {}", ch.id);
        }
        let ids: std::collections::HashSet<_> = c.iter().map(|c| &c.id).collect();
        assert_eq!(ids.len(), c.len(), "{name}: ids unique");
    }
}

#[test]
fn swagger_2_parameters_and_response_schemas_are_read() {
    let c = chunks("swagger.json", UBER);
    let products = c
        .iter()
        .find(|c| c.heading_path.last().map(String::as_str) == Some("GET /products"))
        .expect("GET /products");
    assert_eq!(products.title, "Product Types");
    assert!(
        products
            .body
            .contains("latitude (query, required) — number — Latitude component of location."),
        "{}",
        products.body
    );
    assert!(
        products
            .body
            .contains("200: An array of products — array of Product"),
        "{}",
        products.body
    );
    assert_eq!(
        products.heading_path,
        ["Uber API", "Products", "GET /products"]
    );
    let preamble = &c[0];
    assert_eq!(preamble.kind, ChunkKind::Preamble);
    assert!(preamble.body.contains("Host: api.uber.com"));
    assert!(c
        .iter()
        .any(|c| c.heading_path == ["Uber API", "Schemas", "Product"]));
}

#[test]
fn ref_chains_are_followed_and_cycles_end() {
    let spec = "openapi: 3.0.0
info:
  title: Tasks
  version: '1'
paths:
  /tasks:
    parameters:
      - $ref: '#/components/parameters/Page'
    get:
      summary: List scheduled tasks
      operationId: listTasks
      requestBody:
        $ref: '#/components/requestBodies/Filter'
      responses:
        '200':
          $ref: '#/components/responses/TaskList'
components:
  parameters:
    Page:
      $ref: '#/components/parameters/RealPage'
    RealPage:
      name: page
      in: query
      description: Page number to return.
  requestBodies:
    Filter:
      description: Which tasks to list.
      content:
        application/json:
          schema:
            $ref: '#/components/schemas/Loop'
  responses:
    TaskList:
      description: The tasks.
      content:
        application/json:
          schema:
            type: array
            items:
              $ref: '#/components/schemas/Task'
  schemas:
    Task:
      type: object
      properties:
        cron: {type: string, description: When it runs.}
    Loop:
      $ref: '#/components/schemas/Loop2'
    Loop2:
      $ref: '#/components/schemas/Loop'
";
    let c = chunks("openapi.yaml", spec);
    let op = c
        .iter()
        .find(|c| c.title == "List scheduled tasks")
        .expect("operation");
    assert_eq!(op.heading_path, ["Tasks", "GET /tasks"]);
    assert!(
        op.body.contains("page (query) — Page number to return."),
        "{}",
        op.body
    );
    assert!(
        op.body
            .contains("Request body: Which tasks to list. — application/json — Loop"),
        "{}",
        op.body
    );
    assert!(
        op.body
            .contains("200: The tasks. — application/json — array of Task"),
        "{}",
        op.body
    );
    assert!(op.symbols.iter().any(|s| s == "Task"));
    let task = c.iter().find(|c| c.title == "Task").expect("Task schema");
    assert!(
        task.body.contains("cron (string) — When it runs."),
        "{}",
        task.body
    );
    // the last schema ends at the file's last line
    assert_eq!(c.last().unwrap().end_line as usize, spec.lines().count());
}

#[test]
fn crlf_and_json_tabs_keep_exact_lines() {
    let crlf = PETSTORE.replace('\n', "\r\n");
    let a = chunks("openapi.yaml", PETSTORE);
    let b = chunks("openapi.yaml", &crlf);
    let lines = |c: &[Chunk]| {
        c.iter()
            .map(|c| (c.id.clone(), c.start_line, c.end_line))
            .collect::<Vec<_>>()
    };
    assert_eq!(lines(&a), lines(&b));
    let tabs = PETSTORE_EXPANDED.replace("  ", "\t");
    assert_eq!(
        lines(&chunks("openapi.json", PETSTORE_EXPANDED)),
        lines(&chunks("openapi.json", &tabs))
    );
}

#[test]
fn what_is_not_a_readable_spec_says_why() {
    let e = spec_error("openapi: 3.0.0\ninfo: {title: x\npaths: {}\n");
    assert!(e.starts_with("line "), "{e}");
    let e = spec_error("services:\n  web:\n    image: nginx\n");
    assert!(e.contains("(not an OpenAPI document)"), "{e}");
    let minified = format!(
        "{{\"openapi\":\"3.0.0\",\"paths\":{{{}}}}}",
        (0..400)
            .map(|i| format!("\"/p{i}\":{{\"get\":{{\"summary\":\"operation number {i}\"}}}}"))
            .collect::<Vec<_>>()
            .join(",")
    );
    let e = spec_error(&minified);
    assert!(e.contains("minified"), "{e}");
    // an alias bomb is refused, not expanded
    let mut bomb = String::from("openapi: 3.0.0\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..9 {
        let prev = format!("*a{}", i - 1);
        bomb.push_str(&format!(
            "a{i}: &a{i} [{}]\n",
            [prev.as_str(); 10].join(", ")
        ));
    }
    let e = spec_error(&bomb);
    assert!(e.contains("nodes"), "{e}");
    assert!(chunks("openapi.yaml", "").is_empty());
}

#[test]
fn emoji_escapes_path_item_refs_webhooks_and_untitled_operations_are_read() {
    let spec = r##"{
  "openapi": "3.1.0",
  "info": {"title": "Books", "version": "1"},
  "paths": {
    "/like": {"get": {"summary": "Say \ud83d\udc4d and \udc4d alone, not \\ud83d", "responses": {}}},
    "/books/{isbn}": {"$ref": "#/components/pathItems/BookItem"},
    "/shelves": {"get": {"description": "Returns every shelf of the library that the signed-in reader may see, with the books on it.\nMore."}},
    "/remote": {"get": {"$ref": "ops/remote.yaml"}}
  },
  "webhooks": {"newBook": {"post": {"summary": "A book was added"}}},
  "components": {"pathItems": {"BookItem": {
    "delete": {"operationId": "deleteBook", "description": "Remove a book from the catalogue."}
  }}}
}"##;
    let c = chunks("openapi.json", spec);
    let like = c
        .iter()
        .find(|c| c.heading_path.last().map(String::as_str) == Some("GET /like"))
        .expect("GET /like");
    assert_eq!(like.title, "Say 👍 and \u{fffd} alone, not \\ud83d");
    let delete = c
        .iter()
        .find(|c| c.symbols.iter().any(|s| s == "deleteBook"))
        .expect("path item by $ref");
    assert_eq!(delete.heading_path, ["Books", "DELETE /books/{isbn}"]);
    assert_eq!(
        line(spec, delete.start_line).trim_start(),
        r#""delete": {"operationId": "deleteBook", "description": "Remove a book from the catalogue."}"#
    );
    assert!(delete.body.contains("Remove a book from the catalogue."));
    let shelves = c
        .iter()
        .find(|c| c.heading_path.last().map(String::as_str) == Some("GET /shelves"))
        .expect("GET /shelves");
    assert_eq!(
        shelves.title,
        "Returns every shelf of the library that the signed-in reader may see, with the…"
    );
    assert!(c.iter().any(|c| c.heading_path.last().map(String::as_str)
        == Some("POST newBook (webhook)")
        && c.title == "A book was added"));
    let notes = check(spec).expect("a spec");
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].starts_with("1 path item(s) or operation(s) are `$ref`s to other files"),
        "{notes:?}"
    );
    assert_eq!(check(PETSTORE), Ok(Vec::new()));
}

#[test]
fn compact_json_keeps_the_closing_line_and_block_scalars_keep_their_hash_lines() {
    let compact = "{\"openapi\":\"3.0.0\",\"info\":{\"title\":\"T\",\"version\":\"1\"},\n \"paths\":{\"/a\":{\"get\":{\"summary\":\"A\",\n   \"responses\":{\"200\":{\"description\":\"ok\"}}}}}}";
    let c = chunks("openapi.json", compact);
    let get = c.iter().find(|c| c.title == "A").expect("GET /a");
    assert_eq!((get.start_line, get.end_line), (2, 3));
    let yaml = "openapi: 3.0.0\ninfo:\n  title: T\n  version: '1'\npaths:\n  /a:\n    get:\n      description: |\n        Limits apply.\n        # Rate limits\n\n  /b:\n    get:\n      summary: B\n";
    let c = chunks("openapi.yaml", yaml);
    let a = c
        .iter()
        .find(|c| c.heading_path.last().map(String::as_str) == Some("GET /a"))
        .expect("GET /a");
    assert_eq!((a.start_line, a.end_line), (7, 10), "{:?}", a.text);
    assert_eq!(a.title, "Limits apply.");
}

#[test]
fn hostile_nesting_and_aliases_are_refused_without_overflow() {
    let nested = format!(
        "openapi: 3.0.0\nx:\n{}",
        (1..3000)
            .map(|i| format!("{}k{i}:\n", " ".repeat(i)))
            .collect::<String>()
    );
    assert!(
        spec_error(&nested).contains("deeper than 256"),
        "{}",
        spec_error(&nested)
    );
    let items = format!(
        "openapi: 3.0.0\nx:\n{}",
        (1..3000)
            .map(|i| format!("{}-\n", " ".repeat(i)))
            .collect::<String>()
    );
    let e = spec_error(&items);
    assert!(
        e.contains("deeper than 256") || e.starts_with("line "),
        "{e}"
    );
    let big = "y".repeat(1 << 20);
    let mut bomb = format!("openapi: 3.0.0\nd: &d \"{big}\"\nl:\n");
    bomb.push_str(&"  - *d\n".repeat(70));
    assert!(
        spec_error(&bomb).contains("MiB"),
        "{}",
        spec_error(&bomb).len()
    );
}

#[test]
fn external_path_items_are_found_by_path_and_an_untitled_spec_has_no_name() {
    let spec = "openapi: 3.0.0\npaths:\n  /pets:\n    $ref: paths/pets.yaml\n  /toys:\n    get:\n      $ref: ops/toys.yaml\n";
    let c = chunks("shop.openapi.yaml", spec);
    let pets = c
        .iter()
        .find(|c| c.heading_path.last().map(String::as_str) == Some("/pets"))
        .expect("/pets");
    assert_eq!(pets.heading_path, ["shop.openapi", "/pets"]);
    assert!(
        pets.body.contains("Defined in `paths/pets.yaml`"),
        "{}",
        pets.body
    );
    assert_eq!((pets.start_line, pets.end_line), (3, 4));
    assert!(c
        .iter()
        .any(|c| c.heading_path.last().map(String::as_str) == Some("GET /toys")));
    let notes = check(spec).expect("a spec");
    assert!(
        notes[0].starts_with("2 path item(s) or operation(s)"),
        "{notes:?}"
    );
    let linked = crate::chunk::chunk_document_with_links(
        &doc("shop.openapi.yaml", spec),
        &ChunkerConfig::default(),
    );
    assert!(
        linked.names.is_empty(),
        "the file stem is no name: {:?}",
        linked.names
    );
    let titled = crate::chunk::chunk_document_with_links(
        &doc("openapi.yaml", PETSTORE),
        &ChunkerConfig::default(),
    );
    assert_eq!(titled.names, ["Swagger Petstore"]);
}

#[test]
fn json_tag_lists_do_not_overlap() {
    let spec = "{\n  \"openapi\": \"3.0.0\",\n  \"tags\": [\n    {\n      \"name\": \"a\",\n      \"description\": \"x\"\n    },\n    {\"name\": \"b\", \"description\": \"y\"}\n  ]\n}\n";
    let c = chunks("openapi.json", spec);
    let span = |t: &str| {
        c.iter()
            .find(|c| c.title == t)
            .map(|c| (c.start_line, c.end_line))
    };
    assert_eq!(span("a"), Some((4, 7)));
    assert_eq!(span("b"), Some((8, 8)));
}

#[test]
fn anchors_alias_depth_and_ref_fan_out_are_bounded() {
    // every anchored copy counts: 100 nested anchors over a list of 30,000 items
    let opens: String = (0..100).map(|i| format!("&a{i} [")).collect();
    let copies = format!(
        "openapi: 3.0.0\nx: {opens}{}{}\n",
        "a, ".repeat(30_000),
        "]".repeat(100)
    );
    assert!(
        spec_error(&copies).contains("nodes"),
        "{}",
        spec_error(&copies)
    );
    // an alias may not nest past the depth cap
    let deep = format!(
        "openapi: 3.0.0\na: &d {}{}\nb: {}*d{}\n",
        "[".repeat(200),
        "]".repeat(200),
        "[".repeat(100),
        "]".repeat(100)
    );
    assert!(
        spec_error(&deep).contains("aliases expanded"),
        "{}",
        spec_error(&deep)
    );
    // one long description referenced by every operation
    let ops: String = (0..2000)
        .map(|i| format!("  /p{i}:\n    get:\n      $ref: '#/x'\n"))
        .collect();
    let fan = format!(
        "openapi: 3.0.0\nx:\n  description: {}\npaths:\n{ops}",
        "word ".repeat(20_000)
    );
    assert!(spec_error(&fan).contains("add up"), "{}", spec_error(&fan));
}
