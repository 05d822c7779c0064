/**
 * The conversion endpoint `/convert/<target>`: body reading, the answer table, the request bounds
 * and their governor, and the `node:https` request listener.
 */
export * from "./body.ts";
export * from "./context.ts";
export * from "./budget.ts";
export * from "./governor.ts";
export * from "./answer.ts";
export * from "./listener.ts";
