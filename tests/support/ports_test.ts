import assert from "node:assert/strict";
import { freePort } from "./ports.ts";

function ephemeral(): [number, number] {
  const [low, high] = Deno.readTextFileSync("/proc/sys/net/ipv4/ip_local_port_range").trim()
    .split(/\s+/).map(Number);
  return [low, high];
}

Deno.test("freePort: distinct, bindable ports outside the ephemeral range", () => {
  const [low, high] = ephemeral();
  const ports = Array.from({ length: 100 }, () => freePort());
  assert.equal(new Set(ports).size, ports.length);
  for (const port of ports) {
    assert.ok(port >= 10_000 && (port < low || port > high), `${port} in ${low}-${high}`);
    Deno.listen({ hostname: "127.0.0.1", port }).close();
  }
});

Deno.test("freePort: two processes drawing at once never get the same port", async () => {
  const draw = () =>
    new Deno.Command(Deno.execPath(), {
      args: [
        "eval",
        `import { freePort } from ${JSON.stringify(new URL("./ports.ts", import.meta.url).href)};` +
        "console.log(JSON.stringify(Array.from({ length: 100 }, () => freePort())));",
      ],
      stdout: "piped",
    }).output();
  const [a, b] = await Promise.all([draw(), draw()]);
  const ports = [a, b].flatMap((o) => {
    assert.equal(o.code, 0);
    return JSON.parse(new TextDecoder().decode(o.stdout)) as number[];
  });
  assert.equal(new Set(ports).size, 200);
});
