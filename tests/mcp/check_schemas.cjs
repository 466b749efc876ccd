// Compiles every tool input schema with Ajv in strict mode (draft 2020-12), as strict
// MCP clients do: unknown keywords, custom formats, union types and the like are errors.
//   node check_schemas.cjs TOOLS_JSON       (NODE_PATH must reach the `ajv` package)
const fs = require("fs");
const Ajv2020 = require("ajv/dist/2020").default;

const schemas = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const ajv = new Ajv2020({ strict: true, strictTypes: true, strictTuples: true, strictRequired: true, allErrors: true });
let failed = 0;
for (const [name, schema] of Object.entries(schemas)) {
  try {
    const validate = ajv.compile(schema);
    if (name === "search_docs" && (!validate({ query: "x", limit: 3 }) || validate({ query: "x", limit: 0 }))) {
      throw new Error("validates arguments wrongly: " + JSON.stringify(validate.errors));
    }
    console.log(`ok: ${name}`);
  } catch (e) {
    failed += 1;
    console.error(`refused: ${name}: ${e.message}`);
  }
}
process.exit(failed ? 1 : 0);
