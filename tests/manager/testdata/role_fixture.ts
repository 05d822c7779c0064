/**
 * A role on the runtime of src/main/_role.ts with three components; prints what it stops.
 * `hang`: a component between b and c never stops. `lost`: asks for a shutdown with exit code 1.
 */
import { Role } from "../../../src/main/_role.ts";

const mode = Deno.args[0] ?? "";
const role = new Role({ logger: "fixture", shutdownTimeoutMs: 500 });
role.onStop("a", () => console.log("stop a"));
role.onStop("b", async () => {
  await new Promise((r) => setTimeout(r, 20));
  console.log("stop b");
});
if (mode === "hang") role.onStop("hang", () => new Promise(() => {}));
role.onStop("c", () => console.log(`stop c ready=${role.readiness.ready}`));
role.readiness.set(true);
if (mode === "lost") setTimeout(() => role.shutdown("leader election lost", 1), 10);
console.log("started");
await role.run();
