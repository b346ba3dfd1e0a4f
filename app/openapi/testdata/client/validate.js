// Validates OpenAPI documents with @apidevtools/swagger-parser (strict: the OpenAPI 3.1 schema
// and its own checks). Usage: node validate.js TOOLS_DIR FILE...
const SwaggerParser = require(process.argv[2] + "/node_modules/@apidevtools/swagger-parser");
(async () => {
  let failed = false;
  for (const file of process.argv.slice(3)) {
    try {
      await SwaggerParser.validate(file);
      console.log(file + ": valid");
    } catch (e) {
      failed = true;
      console.log(file + ": " + e.message);
    }
  }
  process.exit(failed ? 1 : 0);
})();
