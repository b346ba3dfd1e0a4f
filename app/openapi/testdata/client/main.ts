// A client of idvault's admin API typed by openapi-typescript from openapi.json (api.ts): it
// reads the error answer in the file named by its argument through the generated types, and
// prints its message. It compiles only if the error answer is a named schema whose message and
// trace_id are strings (not any, not unknown).
import type { components, paths } from "./api";

declare function require(name: string): any;
declare const process: { argv: string[] };

type ErrorBody = paths["/admin/apps"]["get"]["responses"][404]["content"]["application/json"];
type IsAny<T> = 0 extends 1 & T ? true : false;
type IsString<T> = IsAny<T> extends true ? false : [T] extends [string] ? true : false;

const named: components["schemas"]["ListAppsError404"] extends ErrorBody ? true : false = true;
const messageIsString: IsString<ErrorBody["error"]["message"]> = true;
const traceIDIsString: IsString<ErrorBody["error"]["trace_id"]> = true;

const body: ErrorBody = JSON.parse(require("fs").readFileSync(process.argv[2], "utf8"));
const message: string = body.error.message;
const traceID: string = body.error.trace_id;
console.log(JSON.stringify({ named, messageIsString, traceIDIsString, message, traceID }));
