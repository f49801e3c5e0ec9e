// A `node --test` reporter that writes JUnit XML with a `file` attribute on every <testcase>.
//
// Node's own junit reporter writes none (nodejs/node#59422), and ci-shards accounts each reported
// test to the planned file it belongs to by that attribute: without it every shard is "unverified".
// Use: node --test --test-reporter=./examples/node/junit-reporter.mjs --test-reporter-destination=FILE
import { relative } from "node:path";

const ESCAPES = { "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&apos;" };
const esc = (value) => String(value ?? "").replace(/[<>&"']/g, (c) => ESCAPES[c]);

export default async function* junit(source) {
  const cases = [];
  for await (const event of source) {
    if (event.type !== "test:pass" && event.type !== "test:fail") continue;
    const data = event.data;
    if (data.details?.type === "suite") continue; // a describe() block: its tests are reported one by one
    const error = event.type === "test:fail" ? data.details?.error : undefined;
    cases.push({
      name: data.name,
      file: data.file ? relative(process.cwd(), data.file).split("\\").join("/") : "",
      seconds: (data.details?.duration_ms ?? 0) / 1000,
      failure: error === undefined ? undefined : { message: error.cause?.message ?? error.message, text: error.cause?.stack ?? error.stack },
      skipped: Boolean(data.skip || data.todo),
    });
  }
  yield `<?xml version="1.0" encoding="utf-8"?>\n<testsuites>\n<testsuite name="node --test" tests="${cases.length}">\n`;
  for (const c of cases) {
    const head = `  <testcase name="${esc(c.name)}" file="${esc(c.file)}" time="${c.seconds}"`;
    if (c.failure) yield `${head}>\n    <failure message="${esc(c.failure.message)}">${esc(c.failure.text)}</failure>\n  </testcase>\n`;
    else if (c.skipped) yield `${head}>\n    <skipped/>\n  </testcase>\n`;
    else yield `${head}/>\n`;
  }
  yield "</testsuite>\n</testsuites>\n";
}
