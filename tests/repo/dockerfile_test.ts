/**
 * The release artifacts cannot drift from how the roles run in development: the Dockerfile
 * (a Deno build stage compiling one role chosen by the ROLE build arg; a distroless nonroot
 * runtime stage per role with only that binary as its entrypoint) and hack/compile.sh (the
 * `deno compile` flags of each role) are parsed here and compared with the deno.json tasks.
 * Without network access `deno compile` cannot fetch its denort runtime: the script must then say
 * so plainly (and with network, produce a working binary).
 */
import assert from "node:assert/strict";

const REPO = new URL("../../", import.meta.url).pathname;
const ROLES = {
  manager: { task: "manager", entry: "src/main/manager.ts" },
  "webhook-server": { task: "webhook-server", entry: "src/main/webhook_server.ts" },
  convctl: { task: "convctl", entry: "src/main/convctl.ts" },
} as const;
type Role = keyof typeof ROLES;

interface Instruction {
  op: string;
  args: string;
}
interface Stage {
  from: string;
  name?: string;
  body: Instruction[];
}

/** Dockerfile → instructions (comments dropped, `\` continuations joined). */
function instructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  let pending = "";
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!pending && (line === "" || line.startsWith("#"))) continue;
    if (line.endsWith("\\")) {
      pending += line.slice(0, -1) + " ";
      continue;
    }
    const full = (pending + line).trim();
    pending = "";
    const m = /^(\S+)\s+(.*)$/s.exec(full);
    assert.ok(m, `unparsable Dockerfile line: ${full}`);
    out.push({ op: m[1].toUpperCase(), args: m[2].trim() });
  }
  return out;
}

function stages(ins: Instruction[]): { globalArgs: Instruction[]; stages: Stage[] } {
  const globalArgs: Instruction[] = [];
  const list: Stage[] = [];
  for (const i of ins) {
    if (i.op === "FROM") {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(i.args);
      assert.ok(m, `FROM ${i.args}`);
      list.push({ from: m[1], name: m[2], body: [] });
    } else if (list.length === 0) {
      assert.equal(i.op, "ARG", `only ARG may precede the first FROM (${i.op})`);
      globalArgs.push(i);
    } else list.at(-1)!.body.push(i);
  }
  return { globalArgs, stages: list };
}

async function taskWords(task: string): Promise<{ flags: string[]; entry: string }> {
  const tasks = JSON.parse(await Deno.readTextFile(`${REPO}deno.json`)).tasks;
  const words = (tasks[task] as string).split(/\s+/);
  assert.deepEqual(words.slice(0, 2), ["deno", "run"], `task ${task}`);
  return { flags: words.slice(2, -1), entry: words.at(-1)! };
}

/** hack/compile.sh's `case` arm of a role: its flags=(…), entry= and include=(…). */
function compileArm(script: string, role: Role) {
  const arm = new RegExp(`^\\s*${role}\\)\\n([\\s\\S]*?);;`, "m").exec(script);
  assert.ok(arm, `hack/compile.sh has a case arm for ${role}`);
  const array = (name: string) => {
    const m = new RegExp(`${name}=\\(([^)]*)\\)`).exec(arm[1]);
    return m ? m[1].trim().split(/\s+/).filter(Boolean) : [];
  };
  const entry = /entry=(\S+)/.exec(arm[1])?.[1];
  return { flags: array("flags"), include: array("include"), entry };
}

const dockerfile = await Deno.readTextFile(`${REPO}Dockerfile`);
const compileScript = await Deno.readTextFile(`${REPO}hack/compile.sh`);

Deno.test("Dockerfile: a Deno build stage compiling the ROLE through hack/compile.sh", async () => {
  const { globalArgs, stages: list } = stages(instructions(dockerfile));
  const argDefault = (name: string) =>
    globalArgs.map((a) => a.args.split("=")).find(([n]) => n === name)?.[1];
  const pinned = JSON.parse(await Deno.readTextFile(`${REPO}tools/package.json`))
    .devDependencies.deno;
  assert.equal(argDefault("DENO_VERSION"), pinned, "the build stage uses the pinned Deno");
  assert.ok(argDefault("ROLE")! in ROLES, "ROLE defaults to a role");

  const build = list.find((s) => s.name === "build");
  assert.ok(build, "a stage named build");
  assert.equal(build.from, "denoland/deno:${DENO_VERSION}");
  assert.ok(build.body.some((i) => i.op === "ARG" && i.args === "ROLE"), "build sees ROLE");
  const runs = build.body.filter((i) => i.op === "RUN").map((i) => i.args);
  assert.ok(runs.some((r) => /\bdeno install --frozen\b/.test(r)), "deno install --frozen");
  assert.ok(
    runs.some((r) =>
      /bash hack\/compile\.sh "\$\{ROLE\}"/.test(r) && /DCO_COMPILE_OUT=\/out/.test(r)
    ),
    "the build compiles exactly the ROLE into /out",
  );
  // The build context (.dockerignore) carries what the stage copies.
  const ignore = await Deno.readTextFile(`${REPO}.dockerignore`);
  for (const p of ["deno.json", "deno.lock", "hack/", "src/"]) {
    assert.ok(ignore.includes(`!${p}`), `.dockerignore keeps ${p}`);
  }
});

Deno.test("Dockerfile: per role a distroless nonroot stage with only the binary as entrypoint", () => {
  const { stages: list } = stages(instructions(dockerfile));
  const byName = new Map(list.filter((s) => s.name).map((s) => [s.name!, s]));
  /** The stage chain (a stage, its base stage, …) up to an external image. */
  const chain = (s: Stage): Stage[] => {
    const base = byName.get(s.from);
    return base && base !== s ? [s, ...chain(base)] : [s];
  };
  const user = (c: Stage[]) =>
    c.flatMap((s) => s.body.filter((i) => i.op === "USER").map((i) => i.args))[0];

  const final = list.at(-1)!;
  assert.equal(final.from, "${ROLE}", "the image is the stage the ROLE build arg names");
  assert.ok(final.body.some((i) => i.op === "USER" && i.args === "nonroot"));
  for (const role of Object.keys(ROLES) as Role[]) {
    const stage = byName.get(role);
    assert.ok(stage, `a stage named ${role}`);
    const c = chain(stage);
    assert.equal(
      c.at(-1)!.from,
      "gcr.io/distroless/cc-debian12:nonroot",
      `${role} runs on distroless`,
    );
    const u = user(c);
    assert.ok(u && !/^(root|0)(:|$)/.test(u), `${role}: USER ${u} is not root`);
    assert.equal(u, "nonroot");
    const copies = c.flatMap((s) => s.body.filter((i) => i.op === "COPY"));
    assert.deepEqual(copies.map((i) => i.args), [`--from=build /out/${role} /${role}`]);
    const eps = c.flatMap((s) => s.body.filter((i) => i.op === "ENTRYPOINT"));
    assert.equal(eps.length, 1, `${role}: one ENTRYPOINT`);
    assert.deepEqual(JSON.parse(eps[0].args), [`/${role}`]);
    for (const s of c) {
      assert.ok(!s.body.some((i) => i.op === "RUN"), `${role}: nothing runs in the runtime`);
    }
  }
});

Deno.test("hack/compile.sh: each role's flags and entry are its deno.json task's", async () => {
  for (const [role, { task, entry }] of Object.entries(ROLES) as [Role, typeof ROLES[Role]][]) {
    const arm = compileArm(compileScript, role);
    const t = await taskWords(task);
    assert.deepEqual(arm.flags, t.flags, `${role}: compile flags = deno.json task ${task}`);
    assert.equal(arm.entry, entry);
    assert.equal(t.entry, entry);
    if (role === "webhook-server") {
      // compile_pool.ts, convert/pool.ts and convert/listeners.ts start these modules as Workers:
      // they must be in the executable.
      assert.deepEqual(arm.include, [
        "--include",
        "src/webhook/compile_worker.ts",
        "--include",
        "src/webhook/convert/convert_worker.ts",
        "--include",
        "src/webhook/convert/listener_worker.ts",
      ]);
      await Deno.stat(`${REPO}src/webhook/compile_worker.ts`);
      await Deno.stat(`${REPO}src/webhook/convert/convert_worker.ts`);
      await Deno.stat(`${REPO}src/webhook/convert/listener_worker.ts`);
    } else if (role === "convctl") {
      // `convctl test --concurrency` and `lint` start these modules as Workers.
      assert.deepEqual(arm.include, [
        "--include",
        "src/cli/test_worker.ts",
        "--include",
        "src/cli/lint_worker.ts",
      ]);
      await Deno.stat(`${REPO}src/cli/test_worker.ts`);
      await Deno.stat(`${REPO}src/cli/lint_worker.ts`);
    } else assert.deepEqual(arm.include, []);
  }
  const tasks = JSON.parse(await Deno.readTextFile(`${REPO}deno.json`)).tasks;
  assert.equal(tasks.compile, "bash hack/compile.sh");
  assert.match(compileScript, /roles=\(manager webhook-server convctl\)/);
});

Deno.test({
  name: "hack/compile.sh: a binary with network access, else a clear denort message",
  sanitizeResources: false,
  fn: async () => {
    const out = await Deno.makeTempDir({ prefix: "dco-compile-" });
    try {
      const bad = await new Deno.Command("bash", {
        args: [`${REPO}hack/compile.sh`, "nosuchrole"],
        env: { DCO_COMPILE_OUT: out },
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.equal(bad.code, 2);
      assert.match(new TextDecoder().decode(bad.stderr), /unknown role 'nosuchrole'/);

      const r = await new Deno.Command("bash", {
        args: [`${REPO}hack/compile.sh`, "convctl"],
        env: { DCO_COMPILE_OUT: out, NO_COLOR: "1" },
        stdout: "piped",
        stderr: "piped",
      }).output();
      const stderr = new TextDecoder().decode(r.stderr);
      if (r.code === 0) {
        const example = `${REPO}examples/field-rename`;
        const v = await new Deno.Command(`${out}/convctl`, {
          args: ["validate", "-c", `${example}/config.yaml`, "--crd", `${example}/crd.yaml`],
          stdout: "piped",
          stderr: "piped",
        }).output();
        assert.equal(v.code, 0, new TextDecoder().decode(v.stderr));
        assert.match(new TextDecoder().decode(v.stdout), /schema validated: true/);
      } else {
        // Offline (as on the development machines): the cause and the way out are printed.
        assert.match(stderr, /could not fetch its denort runtime/, stderr);
        assert.match(stderr, /needs network access/);
        assert.match(stderr, /deno task bundle/);
      }
    } finally {
      await Deno.remove(out, { recursive: true });
    }
  },
});
