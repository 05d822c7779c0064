/**
 * The chart's built-in CA values (`certificates.builtinCA.*`): each one set becomes its manager
 * flag, none set passes none (the manager's defaults apply), and the values schema refuses what is
 * not a Go duration.
 *
 * Renders with tests/chart/_helm.ts (needs the helm binary that hack/testenv.sh builds).
 */
import assert from "node:assert/strict";
import { FULLNAME, type Obj, render, template } from "./_helm.ts";

function managerArgs(objs: Obj[]): string[] {
  const d = objs.find((o) => o.kind === "Deployment" && o.metadata.name === `${FULLNAME}-manager`);
  assert.ok(d, "manager Deployment rendered");
  return d.spec.template.spec.containers[0].args;
}

const caArgs = (args: string[]) => args.filter((a) => a.startsWith("--ca-"));

Deno.test("chart: certificates.builtinCA values become the manager's --ca-* flags", async () => {
  assert.deepEqual(caArgs(managerArgs(await render())), [], "defaults: no flag");
  const objs = await render({
    "certificates.mode": "builtin",
    "certificates.builtinCA.validity": "2160h",
    "certificates.builtinCA.rotationCheckInterval": "30s",
    "certificates.builtinCA.rotationPropagationDelay": "5m",
  });
  assert.deepEqual(caArgs(managerArgs(objs)), [
    "--ca-validity=2160h",
    "--ca-rotation-check-interval=30s",
    "--ca-rotation-propagation-delay=5m",
  ]);
  const one = await render({ "certificates.builtinCA.rotationPropagationDelay": "90s" });
  assert.deepEqual(caArgs(managerArgs(one)), ["--ca-rotation-propagation-delay=90s"]);
});

Deno.test("chart: the schema refuses a built-in CA value that is not a Go duration", async () => {
  for (const key of ["validity", "rotationCheckInterval", "rotationPropagationDelay"]) {
    const r = await template({ [`certificates.builtinCA.${key}`]: "one year" });
    assert.notEqual(r.code, 0, key);
    assert.match(r.stderr, new RegExp(`builtinCA.*${key}|${key}.*pattern`, "s"), r.stderr);
  }
  const r = await template({ "certificates.builtinCA.lifetime": "1h" });
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /lifetime/);
});
